#if Tracing
import Foundation
import Instrumentation
import Scheduling

/// A ``Scheduling/DateScheduler`` that carries `ServiceContext.current` from each `schedule` call
/// into the action: tasks, one-shot timers, every tick of a periodic timer, each run of a
/// recursion, and the timer handlers of the async layer (`sleep`, `ticks`, `withTimeout`, `clock`).
/// The action runs with the caller's context restored (`ServiceContext.withValue`), so a timeout
/// that fires on a loop thread, say, logs and traces as part of the request that armed it.
///
/// Make one with ``Scheduling/DateScheduler/propagatingServiceContext()``.
///
/// The wrapper is a view, not a scheduler of its own: actions run where and when the base runs
/// them (same order, same deadlines, same disposal and shutdown behaviour), and while they run
/// `Schedulers.current` is the base, never the wrapper — so `wrapper.isCurrent` is false inside
/// them; ask `wrapper.base.isCurrent`. Work scheduled from inside an action keeps the context only
/// if it is scheduled on the wrapper again: the base alone does not carry it.
///
/// Cost: one task-local read per `schedule`. With no context set, the action (or handler) goes to
/// the base unchanged; with one, one closure (or handler value) that holds it, and a task-local
/// push and pop around each run.
///
/// Edge case: because an action scheduled with no context is the base's own, it sees whatever
/// context the code that runs it has: none on a loop or queue thread, but on `TestScheduler`
/// the context of the caller of `advance`, and on an inline scheduler the caller's own.
public final class ServiceContextDateScheduler: DateScheduler {
    /// The scheduler that runs the actions and whose clock the timers follow.
    public let base: any DateScheduler

    /// A view of `base` that carries the caller's `ServiceContext` into each action.
    ///
    /// Wrapping a wrapper is harmless but reads the context twice per call;
    /// ``Scheduling/DateScheduler/propagatingServiceContext()`` returns an existing wrapper as it is.
    public init(_ base: any DateScheduler) {
        self.base = base
    }

    /// The base's `now`.
    public var now: Date { base.now }

    /// Schedules `action` on the base, to run with the context current at this call.
    ///
    /// - Returns: the base's disposable: disposing it before the action starts guarantees that it
    ///   never starts (the same race with an action starting on another thread as the base's).
    @discardableResult
    public func schedule(_ action: __owned @escaping @Sendable () -> Void) -> any Disposable {
        base.schedule(ServiceContextCapture.carrying(action))
    }

    /// The base's recursion (which trampolines on `ImmediateScheduler`), every run with the context
    /// current at this call.
    @discardableResult
    public func scheduleRecursive(
        _ action: @escaping @Sendable (_ reschedule: @escaping @Sendable () -> Void) -> Void
    ) -> any Disposable {
        base.scheduleRecursive(ServiceContextCapture.carrying(action))
    }

    /// The base's one-shot timer (never early, by its monotonic clock), run with the context current
    /// at this call.
    @discardableResult
    public func schedule(after delay: Duration, _ action: __owned @escaping @Sendable () -> Void) -> any Disposable {
        base.schedule(after: delay, ServiceContextCapture.carrying(action))
    }

    /// The base's wall-clock timer, run with the context current at this call. A non-finite `date`
    /// stops the program, naming the base's method.
    @discardableResult
    public func schedule(at date: Date, _ action: __owned @escaping @Sendable () -> Void) -> any Disposable {
        base.schedule(at: date, ServiceContextCapture.carrying(action))
    }

    /// The base's fixed-rate periodic timer (`schedule(after:repeatingEvery:leeway:_:)` and
    /// `schedule(at:repeatingEvery:leeway:_:)` come here); every tick runs with the context current
    /// at this call, not the context of the tick before. `schedule` was checked where it was made.
    @discardableResult
    public func schedule(_ schedule: PeriodicSchedule, _ action: __owned @escaping @Sendable () -> Void) -> any Disposable {
        base.schedule(schedule, ServiceContextCapture.carrying(action))
    }

    /// The base's closure-free one-shot timer (`schedule(after:leeway:handler:)` and
    /// `schedule(at:leeway:handler:)` come here); both outcomes reach `handler` with the context
    /// current at this call (a base that shuts down still reports `timerCancelledByScheduler()`).
    @discardableResult
    public func schedule(_ start: TimerStart, leeway: Duration, handler: some SchedulerTimerHandler) -> any Disposable {
        guard let context = ServiceContext.current else {
            return base.schedule(start, leeway: leeway, handler: handler)
        }
        return base.schedule(start, leeway: leeway, handler: ServiceContextHandler(base: handler, context: context))
    }

    /// The base's re-armable timer, run with the context current at this call: a re-arm keeps
    /// that context (it moves the timer, it does not schedule a new one).
    @discardableResult
    public func scheduleRearmable(
        _ start: TimerStart,
        leeway: Duration,
        _ action: __owned @escaping @Sendable () -> Void
    ) -> any RearmableTimer {
        base.scheduleRearmable(start, leeway: leeway, ServiceContextCapture.carrying(action))
    }

    /// The base's closure-free re-armable timer; its outcome reaches `handler` with the context
    /// current at this call, whatever the context of a later re-arm.
    @discardableResult
    public func scheduleRearmable(
        _ start: TimerStart,
        leeway: Duration,
        handler: some SchedulerTimerHandler
    ) -> any RearmableTimer {
        guard let context = ServiceContext.current else {
            return base.scheduleRearmable(start, leeway: leeway, handler: handler)
        }
        return base.scheduleRearmable(start, leeway: leeway, handler: ServiceContextHandler(base: handler, context: context))
    }

    /// The base's closure-free periodic timer; every tick reaches `handler` with the context
    /// current at this call.
    @discardableResult
    public func schedule(_ schedule: PeriodicSchedule, handler: some SchedulerTimerHandler) -> any Disposable {
        guard let context = ServiceContext.current else {
            return base.schedule(schedule, handler: handler)
        }
        return base.schedule(schedule, handler: ServiceContextHandler(base: handler, context: context))
    }
}

extension DateScheduler {
    /// This scheduler, carrying `ServiceContext.current` from each `schedule` call into the action
    /// and its timers (see ``ServiceContextDateScheduler``). A wrapper already is one, and is
    /// returned as it is.
    public func propagatingServiceContext() -> ServiceContextDateScheduler {
        if let wrapper = self as? ServiceContextDateScheduler { return wrapper }
        return ServiceContextDateScheduler(self)
    }
}
#endif
