import Dispatch
import Foundation
import LoopScheduling
import Scheduling

/// A stand-in for a host program that owns a `uv_loop_t` and runs it on its own thread: how the
/// tests exercise ``LoopScheduler/init(adopting:)``. Its few libuv calls are the engine's
/// `HostUVLoop`, so no unsafe code lives outside `Sources/LoopScheduling`.
public final class HostLoop: Sendable {
    /// `uv_loop_close`'s result once the host thread finished, and the tasks waiting for it.
    private let state = LockedValue<(closed: Int32?, waiting: [CheckedContinuation<Int32, Never>])>((nil, []))
    private let finishedBell = DispatchSemaphore(value: 0)

    private init() {}

    /// Starts a host thread with a fresh loop, calls `setUp` on it with the loop (before `uv_run`,
    /// as a host would create an adopting scheduler), then runs the loop until no handle is left.
    /// Suspends until `setUp` returned.
    public static func start<Result: Sendable>(
        name: String,
        _ setUp: @escaping @Sendable (UnsafeMutableRawPointer) throws -> Result
    ) async throws -> (HostLoop, Result) {
        let host = HostLoop()
        // Handed over through a lock as well as the continuation: the thread sanitizer sees the
        // lock, so what the host thread built (the scheduler) is visibly published to the test.
        let outcome = LockedValue<Swift.Result<Result, any Error>?>(nil)
        await withCheckedContinuation { (ready: CheckedContinuation<Void, Never>) in
            host.launch(name: name) { loop in
                outcome.withLock { $0 = Swift.Result { try setUp(loop) } }
                ready.resume()
            }
        }
        return (host, try outcome.withLock { $0! }.get())
    }

    /// ``start(name:_:)`` that blocks until `setUp` returned: for exit tests' children, whose main
    /// thread is theirs to block.
    // test-waits: blocks (exit-test children only)
    public static func start<Result: Sendable>(
        name: String,
        _ setUp: @escaping @Sendable (UnsafeMutableRawPointer) throws -> Result
    ) throws -> (HostLoop, Result) {
        let host = HostLoop()
        let ready = DispatchSemaphore(value: 0)
        let outcome = LockedValue<Swift.Result<Result, any Error>?>(nil)
        host.launch(name: name) { loop in
            outcome.withLock { $0 = Swift.Result { try setUp(loop) } }
            ready.signal()
        }
        ready.wait()
        return (host, try outcome.withLock { $0! }.get())
    }

    private func launch(name: String, _ setUp: @escaping @Sendable (UnsafeMutableRawPointer) -> Void) {
        let thread = Thread { [self] in
            guard let loop = HostUVLoop.make() else { fatalError("HostLoop: uv_loop_init failed") }
            setUp(loop)
            HostUVLoop.run(loop)
            let closed = HostUVLoop.close(loop)
            let waiting = state.withLock { state in
                state.closed = closed
                defer { state.waiting = [] }
                return state.waiting
            }
            for continuation in waiting { continuation.resume(returning: closed) }
            finishedBell.signal()
        }
        thread.name = name
        thread.start()
    }

    /// Suspends until `uv_run` returned and the loop was closed; returns `uv_loop_close`'s result.
    public func finished() async -> Int32 {
        await withCheckedContinuation { continuation in
            let closed = state.withLock { state -> Int32? in
                if state.closed == nil { state.waiting.append(continuation) }
                return state.closed
            }
            if let closed { continuation.resume(returning: closed) }
        }
    }

    /// ``finished()`` that blocks: for exit tests' children.
    // test-waits: blocks (exit-test children only)
    public func waitUntilFinished() -> Int32 {
        finishedBell.wait()
        finishedBell.signal()
        return state.withLock { $0.closed! }
    }
}
