import Dispatch
import Foundation

/// A scheduler on a concurrent Dispatch queue (RxSwift's `ConcurrentDispatchQueueScheduler`).
///
/// Actions may run in parallel and in any order; each one runs with ``Schedulers/current`` set to
/// this scheduler on its own thread. Timers are never early; a periodic timer's ticks never
/// overlap each other (its next tick is scheduled only once the previous one returned), but may
/// overlap other actions.
public final class ConcurrentQueueScheduler: DateScheduler, DispatchQueueScheduler {
    /// The concurrent queue actions run on.
    public let queue: DispatchQueue
    package let timers: DispatchTimerQueue
    package static var typeName: String { "ConcurrentQueueScheduler" }

    /// Makes a scheduler on a new concurrent queue targeting the global queue of `priority`.
    public init(name: String? = nil, priority: SchedulerPriority = .default) {
        queue = DispatchQueue(
            label: name ?? "ConcurrentQueueScheduler",
            attributes: .concurrent,
            target: .global(qos: priority.qos)
        )
        timers = DispatchTimerQueue(queue: queue, runsSerially: false)
    }
}
