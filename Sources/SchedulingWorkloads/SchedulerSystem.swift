import LoopScheduling
import Scheduling

/// A `LoopScheduler` or a `QueueScheduler` under measurement, through the `DateScheduler`
/// protocol, as an application holds one.
@_spi(Workloads)
public struct SchedulerSystem: WorkloadSystem {
    /// The scheduler under measurement.
    public let scheduler: any DateScheduler
    @usableFromInline let stop: @Sendable () -> Void

    /// `shutdown` runs once the workloads are done with `scheduler`.
    public init(scheduler: any DateScheduler, shutdown: @escaping @Sendable () -> Void) {
        self.scheduler = scheduler
        stop = shutdown
    }

    /// A loop, shut down with the system.
    public init(loop: LoopScheduler) {
        self.init(scheduler: loop) { loop.syncShutdown() }
    }

    /// A queue (nothing to shut down).
    public init(queue: QueueScheduler) {
        self.init(scheduler: queue) {}
    }

    /// `scheduler.schedule(_:)`. Inlinable, as are the other operations: a workload specialised
    /// for this system calls the scheduler directly.
    @inlinable
    public func execute(_ body: __owned @escaping @Sendable () -> Void) {
        scheduler.schedule(consume body)
    }

    /// `scheduler.schedule(after:_:)`.
    @inlinable
    public func schedule(afterNanoseconds delay: Int64, _ body: __owned @escaping @Sendable () -> Void) -> any Disposable {
        scheduler.schedule(after: .nanoseconds(delay), consume body)
    }

    /// `scheduler.schedule(after:repeatingEvery:_:)`: fixed rate, first tick one interval out.
    @inlinable
    public func scheduleRepeating(
        everyNanoseconds interval: Int64,
        _ body: @escaping @Sendable () -> Void
    ) -> any Disposable {
        scheduler.schedule(after: .nanoseconds(interval), repeatingEvery: .nanoseconds(interval), body)
    }

    /// `timer.dispose()`.
    @inlinable
    public func cancel(_ timer: any Disposable) {
        timer.dispose()
    }

    /// Waits until the scheduler ran everything queued before this call and, for a loop, until
    /// it finished that iteration, where a quiet loop gives memory back: what a reading of the
    /// heap after a burst waits for.
    public func settle() {
        if let loop = scheduler as? LoopScheduler {
            AsyncBridge.roundTripAndIteration(loop)
        } else {
            roundTrip()
        }
    }

    /// `timer.isDisposed`.
    public func confirmsCancelled(_ timer: any Disposable) -> Bool? {
        timer.isDisposed
    }

    /// Runs the `shutdown` given at creation (a loop's `shutdown()`).
    public func shutdown() {
        stop()
    }
}
