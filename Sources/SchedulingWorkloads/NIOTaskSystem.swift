#if NIO
import NIOCore

/// SwiftNIO's own timers on one of its event loops (``NIOLoopThread``): `execute`,
/// `scheduleTask(in:)` and `Scheduled.cancel()`, `scheduleRepeatedTask` (fixed delay: SwiftNIO has
/// no fixed-rate timer). Its cancel is a linear search of the loop's heap of scheduled tasks
/// (`removeFirst(where:)` under the loop's task lock).
@_spi(Workloads)
public struct NIOTaskSystem: WorkloadSystem {
    /// The loop and its thread.
    public let thread: NIOLoopThread

    /// The loop the timers are scheduled on.
    public var loop: any EventLoop { thread.loop }

    /// A system on a fresh loop of its own.
    public init() {
        thread = NIOLoopThread()
    }

    /// A one-shot or a repeated task.
    public enum TimerHandle: Sendable {
        case once(Scheduled<Void>)
        case repeated(RepeatedTask)
    }

    /// `loop.execute(_:)`.
    public func execute(_ body: @escaping @Sendable () -> Void) { loop.execute(body) }

    /// `loop.scheduleTask(in:_:)`.
    public func schedule(afterNanoseconds delay: Int64, _ body: @escaping @Sendable () -> Void) -> TimerHandle {
        .once(loop.scheduleTask(in: .nanoseconds(delay), body))
    }

    /// `loop.scheduleRepeatedTask(initialDelay:delay:_:)`.
    public func scheduleRepeating(
        everyNanoseconds interval: Int64,
        _ body: @escaping @Sendable () -> Void
    ) -> TimerHandle {
        .repeated(thread.repeatedTask(everyNanoseconds: interval, body))
    }

    /// `Scheduled.cancel()` or `RepeatedTask.cancel()`.
    public func cancel(_ timer: TimerHandle) {
        switch timer {
        case .once(let scheduled): scheduled.cancel()
        case .repeated(let task): task.cancel()
        }
    }

    /// A one-shot task's future failed with `EventLoopError.cancelled` (on the loop's thread, where
    /// a completed future runs a new callback at once); nil for a repeated task or off the loop.
    public func confirmsCancelled(_ timer: TimerHandle) -> Bool? {
        guard case .once(let scheduled) = timer, loop.inEventLoop else { return nil }
        var cancelled = false
        scheduled.futureResult.assumeIsolated().whenFailure { error in
            if case .cancelled? = error as? EventLoopError { cancelled = true }
        }
        return cancelled
    }

    /// Shuts the loop's group down.
    public func shutdown() { thread.shutdown() }
}
#endif
