import Dispatch
import Foundation

/// A serial scheduler on a private Dispatch queue (RACQueueScheduler / RACTargetQueueScheduler).
///
/// Actions run one at a time, in the order they were scheduled from any one thread; timers start
/// in deadline order, equal deadlines (one-shot and periodic alike) in scheduling order. The queue
/// targets a global queue of the given priority, or a queue you give (``Schedulers/main`` targets
/// the main queue). Each action runs with ``Schedulers/current`` set to this scheduler, on
/// whatever thread Dispatch picks.
///
/// ```swift
/// let scheduler = QueueScheduler(name: "db", priority: .low)
/// let timeout = scheduler.schedule(after: .seconds(5)) { giveUp() }
/// timeout.dispose()   // before it started: it never starts
/// ```
///
/// One-shot `after:` timers count on the monotonic clock and `at:` timers follow the wall clock.
/// No timer starts early, and a disposed timer releases its closure at once (<doc:BehaviourContract>,
/// rules 1, 3 and 4).
///
/// ## Implementation
///
/// Timers, periodic ones included, live in the scheduler's own heap ordered by deadline, then
/// scheduling order, and a disposed timer frees its slot at once; one zero-leeway Dispatch timer
/// source per clock wakes the heap, which re-reads the clock before it starts a timer. A periodic
/// timer goes back into the heap after each tick, at its next grid point.
public final class QueueScheduler: DateScheduler, DispatchQueueScheduler {
    /// The serial queue actions run on.
    public let queue: DispatchQueue
    package let timers: DispatchTimerQueue
    /// The executor of actors pinned to this scheduler (see `asUnownedSerialExecutor()`).
    package let actorExecutor = ActorExecutor()
    /// Set on `queue`: found only by code the queue runs, which is what isolation means here (the
    /// current-scheduler slot is not enough: `performAsCurrent` sets it on any thread).
    let isolationKey = DispatchSpecificKey<Bool>()
    package static var typeName: String { "QueueScheduler" }

    /// Makes a serial scheduler targeting the global queue of `priority`.
    public convenience init(name: String? = nil, priority: SchedulerPriority = .default) {
        self.init(name: name, targeting: .global(qos: priority.qos))
    }

    /// Makes a serial scheduler whose private queue targets `target`. Work still runs one action at a
    /// time even when `target` is concurrent.
    public init(name: String? = nil, targeting target: DispatchQueue) {
        queue = DispatchQueue(label: name ?? "QueueScheduler", target: target)
        timers = DispatchTimerQueue(queue: queue, runsSerially: true)
        queue.setSpecific(key: isolationKey, value: true)
        actorExecutor.bind(to: self)
    }
}
