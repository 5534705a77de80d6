import CLibUV
import Scheduling
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A named pthread running one closure, joinable exactly once.
///
/// A thread whose scheduler was dropped on the thread itself detaches itself at exit, since nobody
/// is left to join it; otherwise the first `join()` reaps it and later callers wait for that.
final class LoopThread: Sendable {
    private enum JoinState: UInt8 {
        case running = 0
        case joining, detached, joined
    }

    // Written once by `start` before any other thread can see the object.
    nonisolated(unsafe) private var thread = pthread_t()
    private let joinState = Atomic<UInt8>(JoinState.running.rawValue)
    private let joined = LockedValue<Bool>(false)

    private final class Start {
        let name: String
        let body: () -> Void
        init(name: String, body: @escaping () -> Void) {
            self.name = name
            self.body = body
        }
    }

    init() {}

    /// Starts a thread named `name` (its first 15 bytes: the Linux limit) running `body`.
    func start(name: String, _ body: @escaping @Sendable () -> Void) throws {
        let start = Unmanaged.passRetained(Start(name: name, body: body)).toOpaque()
        let rc = pthread_create(
            &thread,
            nil,
            { argument in
                let start = Unmanaged<Start>.fromOpaque(argument!).takeRetainedValue()
                _ = clibuv_set_thread_name(LoopThread.truncatedName(start.name))
                start.body()
                return nil
            },
            start
        )
        if rc != 0 {
            Unmanaged<Start>.fromOpaque(start).release()
            throw LoopSchedulerError.system(call: "pthread_create", errno: rc)
        }
    }

    /// The name's first 15 bytes, cut at a character boundary.
    static func truncatedName(_ name: String) -> String {
        var result = ""
        var bytes = 0
        for character in name {
            let size = character.utf8.count
            if bytes + size > 15 { break }
            bytes += size
            result.append(character)
        }
        return result
    }

    /// Called by the thread itself as its last act when nobody will join it.
    func detachSelf() {
        if joinState.compareExchange(
            expected: JoinState.running.rawValue,
            desired: JoinState.detached.rawValue,
            ordering: .acquiringAndReleasing
        ).exchanged {
            let rc = pthread_detach(pthread_self())
            precondition(rc == 0, "pthread_detach failed: \(rc)")
        }
    }

    /// Waits for the thread to exit. Idempotent; concurrent callers all return after it exited.
    func join() {
        joined.withLock { joined in
            guard !joined else { return }
            if joinState.compareExchange(
                expected: JoinState.running.rawValue,
                desired: JoinState.joining.rawValue,
                ordering: .acquiringAndReleasing
            ).exchanged {
                let rc = pthread_join(thread, nil)
                precondition(rc == 0, "pthread_join failed: \(rc)")
                joinState.store(JoinState.joined.rawValue, ordering: .releasing)
            }
            joined = true
        }
    }
}
