#if NIO
import NIOCore
import Scheduling
import SchedulingNIO

/// `EventLoopScheduler` on one of SwiftNIO's event loops (``NIOLoopThread``), used as a channel
/// handler uses it: work is submitted with the loop's own `execute` (SwiftNIO's task, not one of
/// the scheduler's), and the timers are the scheduler's `schedule(after:_:)` and `dispose()`,
/// called on the loop thread.
@_spi(Workloads)
public struct EventLoopSchedulerSystem: WorkloadSystem {
    /// The loop and its thread.
    public let thread: NIOLoopThread
    /// The loop's scheduler (`eventLoop.scheduler`).
    public let scheduler: EventLoopScheduler

    /// A system on a fresh loop of its own.
    public init() {
        thread = NIOLoopThread()
        scheduler = thread.loop.scheduler
    }

    /// `eventLoop.execute(_:)`.
    public func execute(_ body: @escaping @Sendable () -> Void) { thread.loop.execute(body) }

    /// `scheduler.schedule(after:_:)`.
    public func schedule(afterNanoseconds delay: Int64, _ body: @escaping @Sendable () -> Void) -> any Disposable {
        scheduler.schedule(after: .nanoseconds(delay), body)
    }

    /// `scheduler.schedule(after:repeatingEvery:_:)`: fixed rate.
    public func scheduleRepeating(
        everyNanoseconds interval: Int64,
        _ body: @escaping @Sendable () -> Void
    ) -> any Disposable {
        scheduler.schedule(after: .nanoseconds(interval), repeatingEvery: .nanoseconds(interval), body)
    }

    /// `timer.dispose()`.
    public func cancel(_ timer: any Disposable) { timer.dispose() }

    /// `timer.isDisposed`.
    public func confirmsCancelled(_ timer: any Disposable) -> Bool? { timer.isDisposed }

    /// Shuts the loop's group down, which ends the scheduler.
    public func shutdown() { thread.shutdown() }
}
#endif
