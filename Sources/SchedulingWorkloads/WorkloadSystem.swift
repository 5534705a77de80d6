import Dispatch

/// A system the timer and task workloads run on: this package's schedulers
/// (``SchedulerSystem``), or another event loop a benchmark compares them with (SwiftNIO's, in
/// `Benchmarks/`), through the few operations the workloads need.
@_spi(Workloads)
public protocol WorkloadSystem: Sendable {
    /// What scheduling a timer returns, to cancel it with.
    associatedtype TimerHandle: Sendable

    /// Submits `body` to run as soon as possible, from whatever thread calls it.
    func execute(_ body: __owned @escaping @Sendable () -> Void)

    /// A one-shot timer `delay` nanoseconds from now.
    func schedule(afterNanoseconds delay: Int64, _ body: __owned @escaping @Sendable () -> Void) -> TimerHandle

    /// A periodic timer, first `interval` nanoseconds from now (fixed rate where the system has
    /// it; SwiftNIO's is fixed delay).
    func scheduleRepeating(everyNanoseconds interval: Int64, _ body: __owned @escaping @Sendable () -> Void) -> TimerHandle

    /// Cancels a timer; a timer already cancelled or fired is left alone.
    func cancel(_ timer: TimerHandle)

    /// Stops the system; called once, after its last workload.
    func shutdown()

    /// Whether the system acknowledged `timer`'s cancellation (a disposed disposable, a failed
    /// future), asked on the system's thread once the workload cancelled it and stopped its clock;
    /// nil when the system has no way to tell.
    func confirmsCancelled(_ timer: TimerHandle) -> Bool?
}

@_spi(Workloads)
extension WorkloadSystem {
    /// No way to tell.
    public func confirmsCancelled(_ timer: TimerHandle) -> Bool? { nil }
}

@_spi(Workloads)
extension WorkloadSystem {
    /// Runs `body` as work of the system and waits for it, so what it does happens "on" the
    /// system: on the loop thread, or on the queue.
    public func onScheduler(_ body: @escaping @Sendable () -> Void) {
        let done = DispatchSemaphore(value: 0)
        execute {
            body()
            done.signal()
        }
        done.wait()
    }

    /// Waits until everything the system had queued before this call was processed.
    public func roundTrip() {
        onScheduler {}
    }
}
