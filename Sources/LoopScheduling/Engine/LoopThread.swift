import CLibUV
import Foundation
import LoopEngine
@_spi(SchedulerEngine) import Scheduling

#if canImport(Glibc)
import Glibc
#endif

/// A named pthread running one closure, joinable exactly once.
///
/// A thread whose scheduler was dropped on the thread itself (``detachWhenFinished()``) detaches
/// itself at exit, since nobody is left to join it; otherwise the first `join()` reaps it and
/// later callers wait for that. One state machine, under one condition lock:
///
/// ```
/// running ──detachWhenFinished──▶ detachRequested ──thread ends──▶ detached
///    │  └──thread ends──▶ ended ──detachWhenFinished──────────────────▲
///    └───────────join (from running, detachRequested or ended)──▶ joining ──returned──▶ joined
/// ```
// `thread` is written once by `start` before any other thread sees the object; `state` only under
// `condition`.
final class LoopThread: LoopOwnThread, @unchecked Sendable {
    enum JoinState {
        case running
        /// Nobody will join: the thread detaches itself when its body returns.
        case detachRequested
        case detached
        /// The body returned; nobody joined or detached the thread yet.
        case ended
        /// A caller is in `pthread_join` (without the lock: the thread takes it to finish).
        case joining
        case joined
    }

    private var thread = pthread_t()
    private let condition = NSCondition()
    private var state = JoinState.running

    private final class Start {
        let name: String
        let body: () -> Void
        init(name: String, body: @escaping () -> Void) {
            self.name = name
            self.body = body
        }
    }

    init() {}

    /// Starts a thread named `name` (its first 15 bytes: the Linux limit) running `body`, marked
    /// as a loop thread (``LoopThreadMarker``) for its whole life.
    func start(name: String, faults: LoopSetUpFaults = .none, _ body: @escaping @Sendable () -> Void) throws {
        try faults.check(.thread)
        let start = Unmanaged.passRetained(Start(name: name, body: { [self] in
            body()
            finished()
        })).toOpaque()
        let rc = pthread_create(
            &thread,
            nil,
            { argument in
                let start = Unmanaged<Start>.fromOpaque(argument!).takeRetainedValue()
                _ = clibuv_set_thread_name(LoopThread.truncatedName(start.name))
                LoopThreadMarker.markCurrentThread()
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

    /// Says nobody will join the thread: it detaches itself when its body returns (its scheduler
    /// was dropped on the thread itself, or on another loop's thread, which must not wait for
    /// it), or is detached at once if its body returned already, so it is never left unreaped.
    func detachWhenFinished() {
        condition.lock()
        defer { condition.unlock() }
        switch state {
        case .running: state = .detachRequested
        case .ended: detach(thread)
        case .detachRequested, .detached, .joining, .joined: break
        }
    }

    /// The thread's last act: detach if nobody will join.
    private func finished() {
        condition.lock()
        defer { condition.unlock() }
        switch state {
        case .running: state = .ended
        case .detachRequested: detach(pthread_self())
        case .ended, .detached, .joining, .joined: break
        }
    }

    /// Under the lock: nobody will join `thread` (this one), so the system reaps it at its end.
    private func detach(_ thread: pthread_t) {
        state = .detached
        let rc = pthread_detach(thread)
        precondition(rc == 0, "pthread_detach failed: \(rc)")
    }

    /// Where the thread stands: for the tests.
    var joinState: JoinState {
        condition.lock()
        defer { condition.unlock() }
        return state
    }

    /// Waits for the thread to exit. Idempotent; concurrent callers all return after it exited.
    /// A join after ``detachWhenFinished()`` (a reference resurrected by a deinit's callee) still
    /// reaps the thread, which then does not detach itself.
    func join() {
        condition.lock()
        switch state {
        case .running, .detachRequested, .ended:
            state = .joining
            condition.unlock()
            let rc = pthread_join(thread, nil)
            precondition(rc == 0, "pthread_join failed: \(rc)")
            condition.lock()
            state = .joined
            condition.broadcast()
        case .joining:
            while state == .joining { condition.wait() }
        case .detached, .joined:
            break
        }
        condition.unlock()
    }
}
