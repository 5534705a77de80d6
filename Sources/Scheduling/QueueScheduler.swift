import Dispatch
import Foundation

/// A serial scheduler on a private Dispatch queue (RACQueueScheduler / RACTargetQueueScheduler).
///
/// Actions run one at a time, in the order they were scheduled from any one thread; timers start
/// in deadline order. The queue targets a global queue of the given priority, or a queue you give
/// (``Schedulers/main`` targets the main queue). Each action runs with ``Schedulers/current`` set to
/// this scheduler, on whatever thread Dispatch picks.
///
/// ```swift
/// let scheduler = QueueScheduler(name: "db", priority: .low)
/// let timeout = scheduler.schedule(after: .seconds(5)) { giveUp() }
/// timeout.dispose()   // before it started: it never starts
/// ```
///
/// One-shot `after:` timers are monotonic and `at:` timers follow Dispatch's wall clock. They live
/// in the scheduler's own heap, so equal deadlines start in scheduling order and a disposed timer
/// frees its slot and closure at once; one zero-leeway Dispatch timer source per clock wakes the
/// heap, which re-reads the clock and never starts a timer early.
public final class QueueScheduler: DateScheduler {
    /// The serial queue actions run on.
    public let queue: DispatchQueue
    private let timers: DispatchTimers

    /// Makes a serial scheduler targeting the global queue of `priority`.
    public init(name: String? = nil, priority: SchedulerPriority = .default) {
        let queue = DispatchQueue(label: name ?? "QueueScheduler", target: .global(qos: priority.qos))
        self.queue = queue
        self.timers = DispatchTimers(queue: queue, typeName: "QueueScheduler", runsSerially: true)
    }

    /// Makes a serial scheduler whose private queue targets `target`. Work still runs one action at a
    /// time even when `target` is concurrent.
    public init(name: String? = nil, targeting target: DispatchQueue) {
        let queue = DispatchQueue(label: name ?? "QueueScheduler", target: target)
        self.queue = queue
        self.timers = DispatchTimers(queue: queue, typeName: "QueueScheduler", runsSerially: true)
    }

    /// The wall clock.
    public var now: Date { Date() }

    /// Schedules `action` on the queue. See ``Scheduler/schedule(_:)``.
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

    /// See ``DateScheduler/schedule(after:repeatingEvery:leeway:_:)``. Ticks come from a Dispatch
    /// timer source, which coalesces missed ticks into one.
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
