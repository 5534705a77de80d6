import Dispatch
import Foundation

/// The one implementation of ``QueueScheduler`` and ``ConcurrentQueueScheduler``: each holds its
/// queue and its ``DispatchTimerQueue``; the scheduling methods are these defaults.
///
/// Tasks go to the queue with `async`, wrapped in a ``ScheduledAction`` so that disposing releases
/// the closure at once. Timers, one-shot and periodic, go to the timer queue's heaps.
package protocol DispatchQueueScheduler: DateScheduler {
    /// The queue actions run on.
    var queue: DispatchQueue { get }
    /// The scheduler's timers.
    var timers: DispatchTimerQueue { get }
    /// The type name used in bad-input messages, such as `QueueScheduler`.
    static var typeName: String { get }
}

extension DispatchQueueScheduler {
    /// The wall clock.
    public var now: Date { Date() }

    /// Schedules `action` on the queue. See ``Scheduler/schedule(_:)``.
    @discardableResult
    public func schedule(_ action: __owned @escaping @Sendable () -> Void) -> any Disposable {
        let entry = ScheduledAction(action: consume action)
        queue.async { entry.runOnce(as: self) }
        return entry
    }

    /// See ``DateScheduler/schedule(after:_:)``. The deadline is taken on the monotonic clock
    /// when this is called; equal deadlines start in scheduling order (<doc:BehaviourContract>,
    /// rule 3), and disposing releases the closure at once.
    @discardableResult
    public func schedule(after delay: Duration, _ action: __owned @escaping @Sendable () -> Void) -> any Disposable {
        let deadline = Nanoseconds.adding(Nanoseconds.monotonicNow(), Nanoseconds.delay(delay))
        return timers.schedule(deadline: deadline, wall: false, owner: self, consume action)
    }

    /// See ``DateScheduler/schedule(at:_:)``. The timer follows the wall clock, also when it is
    /// stepped after scheduling.
    @discardableResult
    public func schedule(at date: Date, _ action: __owned @escaping @Sendable () -> Void) -> any Disposable {
        BadInput.checkDate(date, method: "\(Self.typeName).schedule(at:)")
        return timers.schedule(deadline: Nanoseconds.sinceEpoch(date), wall: true, owner: self, consume action)
    }

    /// See ``DateScheduler/scheduleRearmable(_:leeway:_:)``: a one-shot timer that
    /// ``RearmableTimer/rearm(after:)`` moves in place (a later deadline far away moves nothing
    /// until its time comes near). `leeway` lets its wake-up coalesce (rule 5).
    @discardableResult
    public func scheduleRearmable(
        _ start: TimerStart,
        leeway: Duration,
        _ action: __owned @escaping @Sendable () -> Void
    ) -> any RearmableTimer {
        BadInput.checkLeeway(leeway, method: "\(Self.typeName).scheduleRearmable(_:leeway:_:)")
        switch start {
        case .after(let delay):
            let deadline = Nanoseconds.adding(Nanoseconds.monotonicNow(), Nanoseconds.delay(delay))
            return timers.schedule(deadline: deadline, wall: false, leeway: Nanoseconds.of(leeway), owner: self, consume action)
        case .at(let date):
            BadInput.checkDate(date, method: "\(Self.typeName).scheduleRearmable(at:)")
            return timers.schedule(
                deadline: Nanoseconds.sinceEpoch(date),
                wall: true,
                leeway: Nanoseconds.of(leeway),
                owner: self,
                consume action
            )
        }
    }

    /// See ``DateScheduler/schedule(_:_:)``.
    ///
    /// The next tick is scheduled only after the previous one returned, at the next grid point, so
    /// its ticks never overlap each other (also on a concurrent queue, where they may overlap other
    /// actions), and a tick due with a one-shot timer of the same deadline starts in scheduling
    /// order (<doc:BehaviourContract>, rules 3 and 5). `leeway` only lets a tick's wake-up merge
    /// with another one that falls within it; a timer alone wakes at its deadline. A wall-clock
    /// start follows the wall clock; later ticks follow the monotonic grid from it, and a past date
    /// keeps its grid: the first tick runs at once, the next at the first grid point of the date
    /// after it.
    @discardableResult
    public func schedule(_ schedule: PeriodicSchedule, _ action: __owned @escaping @Sendable () -> Void) -> any Disposable {
        let interval = schedule.intervalNanoseconds
        let deadline: Int64
        let wall: Bool
        switch schedule.start {
        case .after(let delay):
            deadline = Nanoseconds.adding(Nanoseconds.monotonicNow(), Nanoseconds.delay(delay))
            wall = false
        case .at(let date):
            deadline = PeriodicGrid.latestPoint(
                origin: Nanoseconds.sinceEpoch(date),
                interval: interval,
                notAfter: Nanoseconds.wallNow()
            )
            wall = true
        }
        return timers.schedulePeriodic(
            deadline: deadline,
            wall: wall,
            interval: interval,
            leeway: schedule.leewayNanoseconds,
            owner: self,
            consume action
        )
    }
}

extension DispatchQueueScheduler where Self: TaskExecutor {
    /// Queues the job of a task that prefers this scheduler behind the work already on the queue,
    /// to run with the scheduler as current and as the task's executor (so its nonisolated calls
    /// need no hop): what both Dispatch schedulers' `enqueue` does.
    package func enqueueTaskJob(_ job: UnownedJob) {
        EnqueueProbe.record(self)
        queue.async { [self] in
            CurrentScheduler.withCurrent(self) {
                job.runSynchronously(on: UnownedTaskExecutor(ordinary: self))
            }
        }
    }
}
