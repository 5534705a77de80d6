import Dispatch
import Foundation

/// A scheduler on a concurrent Dispatch queue (RxSwift's `ConcurrentDispatchQueueScheduler`).
///
/// Actions may run in parallel and in any order; each one runs with ``Schedulers/current`` set to
/// this scheduler on its own thread. Timers are never early; a periodic timer's ticks never
/// overlap each other (a Dispatch source serializes its handler), but may overlap other actions.
public final class ConcurrentQueueScheduler: DateScheduler {
    /// The concurrent queue actions run on.
    public let queue: DispatchQueue
    private let timers: DispatchTimers

    /// Makes a scheduler on a new concurrent queue targeting the global queue of `priority`.
    public init(name: String? = nil, priority: SchedulerPriority = .default) {
        let queue = DispatchQueue(
            label: name ?? "ConcurrentQueueScheduler",
            attributes: .concurrent,
            target: .global(qos: priority.qos)
        )
        self.queue = queue
        self.timers = DispatchTimers(queue: queue, typeName: "ConcurrentQueueScheduler", runsSerially: false)
    }

    /// The wall clock.
    public var now: Date { Date() }

    /// See ``Scheduler/schedule(_:)``.
    @discardableResult
    public func schedule(_ action: @escaping @Sendable () -> Void) -> any Disposable {
        timers.schedule(owner: self, action)
    }

    /// See ``DateScheduler/schedule(after:_:)``.
    @discardableResult
    public func schedule(after delay: Duration, _ action: @escaping @Sendable () -> Void) -> any Disposable {
        timers.schedule(owner: self, after: delay, action)
    }

    /// See ``DateScheduler/schedule(at:_:)``.
    @discardableResult
    public func schedule(at date: Date, _ action: @escaping @Sendable () -> Void) -> any Disposable {
        timers.schedule(owner: self, at: date, action)
    }

    /// See ``DateScheduler/schedule(after:repeatingEvery:leeway:_:)``.
    @discardableResult
    public func schedule(
        after delay: Duration,
        repeatingEvery interval: Duration,
        leeway: Duration,
        _ action: @escaping @Sendable () -> Void
    ) -> any Disposable {
        timers.schedule(owner: self, after: delay, repeatingEvery: interval, leeway: leeway, action)
    }

    /// See ``DateScheduler/schedule(at:repeatingEvery:leeway:_:)``.
    @discardableResult
    public func schedule(
        at date: Date,
        repeatingEvery interval: Duration,
        leeway: Duration,
        _ action: @escaping @Sendable () -> Void
    ) -> any Disposable {
        timers.schedule(owner: self, at: date, repeatingEvery: interval, leeway: leeway, action)
    }
}
