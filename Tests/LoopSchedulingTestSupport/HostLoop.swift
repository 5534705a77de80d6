import Dispatch
import Foundation
import LoopScheduling
import Scheduling

/// A stand-in for a host program that owns a `uv_loop_t` and runs it on its own thread: how the
/// tests exercise ``LoopScheduler/init(adopting:)``. Its few libuv calls are the engine's
/// `HostUVLoop`, so no unsafe code lives outside `Sources/LoopScheduling`.
public final class HostLoop: Sendable {
    private let finished = DispatchSemaphore(value: 0)
    private let closeResult = LockedValue<Int32?>(nil)

    private init() {}

    /// Starts a host thread with a fresh loop, calls `setUp` on it with the loop (before `uv_run`,
    /// as a host would create an adopting scheduler), then runs the loop until no handle is left.
    public static func start<Result: Sendable>(
        name: String,
        _ setUp: @escaping @Sendable (UnsafeMutableRawPointer) throws -> Result
    ) throws -> (HostLoop, Result) {
        let host = HostLoop()
        let ready = DispatchSemaphore(value: 0)
        let outcome = LockedValue<Swift.Result<Result, any Error>?>(nil)
        let thread = Thread {
            guard let loop = HostUVLoop.make() else { fatalError("HostLoop: uv_loop_init failed") }
            let result = Swift.Result { try setUp(loop) }
            outcome.withLock { $0 = result }
            ready.signal()
            HostUVLoop.run(loop)
            let closed = HostUVLoop.close(loop)
            host.closeResult.withLock { $0 = closed }
            host.finished.signal()
        }
        thread.name = name
        thread.start()
        ready.wait()
        let result = try outcome.withLock { $0! }.get()
        return (host, result)
    }

    /// Waits for `uv_run` to return and the loop to be closed; returns `uv_loop_close`'s result.
    public func waitUntilFinished() -> Int32 {
        finished.wait()
        finished.signal()
        return closeResult.withLock { $0! }
    }
}
