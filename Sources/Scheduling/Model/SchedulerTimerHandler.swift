import Foundation

/// Receives a timer's outcome without a closure per timer (NIO's `NIOScheduledCallbackHandler`):
/// the async layer (``DateScheduler/sleep(for:leeway:)``, ``SchedulerTicks``,
/// ``DateScheduler/withTimeout(_:_:)``) hands a scheduler one small object that is the handler,
/// the continuation holder and the cancellation state at once.
///
/// A scheduler calls at most one of the two methods for a one-shot timer (``timerFired()`` once per
/// tick for a periodic one), and none after the user disposed the timer's disposable and
/// `dispose()` returned (<doc:BehaviourContract>, rule 1).
public protocol SchedulerTimerHandler: Sendable {
    /// The deadline passed; runs as the scheduler's action (``Schedulers/current`` is the
    /// scheduler, <doc:BehaviourContract> rule 2). For a periodic timer, once per tick.
    func timerFired()

    /// The scheduler disposed the timer before it fired (before its next tick, for a periodic
    /// timer) because the scheduler shut down (`LoopScheduler`). Never called when the user
    /// disposes it. Default: nothing.
    ///
    /// Dispatch-backed and test schedulers never shut down, so they never call it.
    func timerCancelledByScheduler()
}

extension SchedulerTimerHandler {
    /// Does nothing.
    public func timerCancelledByScheduler() {}
}

extension DateScheduler {
    /// Calls `handler.timerFired()` no earlier than `delay` after this call, by the scheduler's
    /// monotonic clock (<doc:BehaviourContract>, rule 4), and up to `leeway` late. A negative
    /// `leeway` stops the program (rule 9).
    ///
    /// - Returns: a disposable; disposing it before the timer fired guarantees `timerFired()` is
    ///   never called, and releases the scheduler's reference to `handler` at once.
    /// - Note: `dispose()` racing the deadline on another thread: the only promise is that a timer
    ///   that has not fired when `dispose()` returns never fires. A timer that already fired makes
    ///   `dispose()` a no-op.
    @discardableResult
    public func schedule(
        after delay: Duration,
        leeway: Duration,
        handler: some SchedulerTimerHandler
    ) -> any Disposable {
        BadInput.checkLeeway(leeway, method: name("schedule(after:leeway:handler:)"))
        return schedule(.after(delay), leeway: leeway, handler: handler)
    }

    /// Calls `handler.timerFired()` no earlier than the wall clock reaching `date`
    /// (<doc:BehaviourContract>, rule 4), up to `leeway` late. A past date fires as soon as possible;
    /// a non-finite one, or a negative `leeway`, stops the program (rule 9).
    ///
    /// - Note: the same dispose-versus-fire race as ``schedule(after:leeway:handler:)``.
    @discardableResult
    public func schedule(at date: Date, leeway: Duration, handler: some SchedulerTimerHandler) -> any Disposable {
        BadInput.checkDate(date, method: name("schedule(at:leeway:handler:)"))
        BadInput.checkLeeway(leeway, method: name("schedule(at:leeway:handler:)"))
        return schedule(.at(date), leeway: leeway, handler: handler)
    }

    /// Calls `handler.timerFired()` for each tick of a fixed-rate periodic timer: first after
    /// `delay`, then every `interval` (<doc:BehaviourContract>, rule 5: missed ticks are skipped,
    /// never run back to back). A non-positive `interval` or a negative `leeway` stops the program
    /// (rule 9). A scheduler that shuts down and disposes the timer reports
    /// ``SchedulerTimerHandler/timerCancelledByScheduler()`` (which is how ``SchedulerTicks`` ends
    /// when its scheduler shuts down).
    ///
    /// - Note: disposing (also from inside a tick) stops all future ticks; a tick already running
    ///   on another thread finishes.
    @discardableResult
    public func schedule<Handler: SchedulerTimerHandler>(
        after delay: Duration,
        repeatingEvery interval: Duration,
        leeway: Duration,
        handler: Handler
    ) -> any Disposable {
        let call = "schedule(after:repeatingEvery:leeway:handler:)"
        return schedule(checkedSchedule(.after(delay), interval, leeway, call: call), handler: handler)
    }

    /// The default for schedulers that never shut down: a closure timer around the handler, which
    /// fires at the deadline (within any leeway).
    @discardableResult
    public func schedule(_ start: TimerStart, leeway: Duration, handler: some SchedulerTimerHandler) -> any Disposable {
        switch start {
        case .after(let delay): schedule(after: delay) { handler.timerFired() }
        case .at(let date): schedule(at: date) { handler.timerFired() }
        }
    }

    /// The default for schedulers that never shut down: a closure periodic timer around the
    /// handler.
    @discardableResult
    public func schedule(_ schedule: PeriodicSchedule, handler: some SchedulerTimerHandler) -> any Disposable {
        self.schedule(schedule) { handler.timerFired() }
    }
}
