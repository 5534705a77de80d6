import Foundation

/// Something that runs actions: *when* (now, later, periodically) and *where* (a queue, a loop
/// thread, the caller's thread). Every `schedule` returns a ``Disposable``: disposing it before
/// the action starts guarantees the action never starts, and dropping it cancels nothing
/// (<doc:BehaviourContract>, rule 1).
///
/// While a scheduler runs an action, ``Schedulers/current`` is that scheduler (except for
/// ``ImmediateScheduler``, which runs actions inline on the caller's context; rule 2). The race
/// to know: `dispose()` on one thread while the action starts on another only promises that an
/// action which has not started when `dispose()` returns never starts.
///
/// ## Implementation
///
/// Actions are taken `__owned`: the closure a caller writes at the call is handed to the
/// scheduler, which keeps it, instead of being retained for the scheduler and released by the
/// caller (two atomic operations per schedule on a hot path). A conformance may take it borrowed;
/// callers see no difference.
public protocol Scheduler: AnyObject, Sendable {
    /// Schedules `action` to run as soon as possible.
    ///
    /// - Returns: a disposable; disposing it before the action starts guarantees that it never
    ///   starts. Dropping it cancels nothing.
    /// - Note: there is an inherent race between `dispose()` on one thread and the action starting
    ///   on another: `dispose()` only promises that an action which has not started will not start.
    @discardableResult
    func schedule(_ action: __owned @escaping @Sendable () -> Void) -> any Disposable

    /// Runs `action`, and again each time it calls `reschedule`, until the returned disposable is
    /// disposed. Each run goes through ``schedule(_:)``, so it happens after the current one
    /// returned, never nested inside it.
    ///
    /// Calling `reschedule` several times during one run schedules that many runs. Calling it after
    /// the recursion was disposed does nothing. Schedulers that run actions inline
    /// (``ImmediateScheduler``) trampoline, so the stack does not grow with the number of runs.
    @discardableResult
    func scheduleRecursive(
        _ action: @escaping @Sendable (_ reschedule: @escaping @Sendable () -> Void) -> Void
    ) -> any Disposable
}

/// A scheduler with a clock: one-shot timers relative to now (monotonic) or at a wall-clock date,
/// and periodic timers on a fixed-rate grid.
///
/// Every timer keeps the <doc:BehaviourContract>: never early (rule 4), equal deadlines in
/// scheduling order (rule 3), missed periodic ticks skipped rather than run back to back
/// (rule 5), bad input such as a non-finite date stopping the program (rule 9).
public protocol DateScheduler: Scheduler {
    /// The scheduler's idea of the wall clock: `Date()` for real schedulers, virtual time for
    /// ``TestScheduler``.
    ///
    /// It is the clock of `at:` timers, not of `after:` timers: those count on the monotonic clock,
    /// which the wall clock drifts from (NTP slews it by microseconds, an administrator can set it).
    /// Measure elapsed time — how long a connection was idle, when a timer fired after its start —
    /// with `clock.now`, the scheduler's ``SchedulerClock`` on the monotonic clock of its `after:`
    /// timers: a timer that fired on time can look microseconds early by differences of `now`.
    ///
    /// ```swift
    /// let start = scheduler.clock.now
    /// scheduler.schedule(after: .seconds(30)) {
    ///     print(start.duration(to: scheduler.clock.now))  // never less than 30 s
    /// }
    /// ```
    var now: Date { get }

    /// Schedules `action` to start no earlier than `delay` after this call, by the monotonic clock.
    ///
    /// A zero or negative delay means "as soon as possible". A delay too large to represent in
    /// nanoseconds (such as `.seconds(Int64.max)`) saturates: the action stays pending, without the
    /// scheduler spinning, until it is disposed.
    @discardableResult
    func schedule(after delay: Duration, _ action: __owned @escaping @Sendable () -> Void) -> any Disposable

    /// Schedules `action` to start no earlier than the moment the wall clock reaches `date`.
    ///
    /// A date in the past runs as soon as possible; `Date.distantFuture` stays pending until
    /// disposed. A non-finite date is a programmer error and stops the program.
    @discardableResult
    func schedule(at date: Date, _ action: __owned @escaping @Sendable () -> Void) -> any Disposable

    /// Schedules `action` on a fixed-rate periodic timer: first at `schedule.start`, then every
    /// `schedule.interval` (see ``PeriodicSchedule``). Disposing (also from inside a tick) stops all
    /// future ticks; a tick already running on another thread finishes.
    ///
    /// The requirement behind ``schedule(after:repeatingEvery:leeway:_:)`` and
    /// ``schedule(at:repeatingEvery:leeway:_:)``, which check their arguments once (the schedule
    /// arrives checked) and call it.
    @discardableResult
    func schedule(_ schedule: PeriodicSchedule, _ action: __owned @escaping @Sendable () -> Void) -> any Disposable

    // Closure-free timers for the async layer; defaults in SchedulerTimerHandler.swift.
    /// Calls `handler.timerFired()` once, no earlier than `start`, up to `leeway` late. See
    /// ``SchedulerTimerHandler``.
    @discardableResult
    func schedule(_ start: TimerStart, leeway: Duration, handler: some SchedulerTimerHandler) -> any Disposable

    /// Calls `handler.timerFired()` for each tick of a periodic timer. See ``SchedulerTimerHandler``.
    @discardableResult
    func schedule(_ schedule: PeriodicSchedule, handler: some SchedulerTimerHandler) -> any Disposable

    /// Schedules `action` once, no earlier than `start`, up to `leeway` late, on a timer whose
    /// deadline moves in place (``RearmableTimer``). The requirement behind
    /// ``scheduleRearmable(after:_:)`` and ``scheduleRearmable(at:_:)``; the default disposes and
    /// schedules a timer per re-arm, with the same promises.
    @discardableResult
    func scheduleRearmable(
        _ start: TimerStart,
        leeway: Duration,
        _ action: __owned @escaping @Sendable () -> Void
    ) -> any RearmableTimer

    /// The handler form of ``scheduleRearmable(_:leeway:_:)``: calls `handler.timerFired()` once.
    @discardableResult
    func scheduleRearmable(_ start: TimerStart, leeway: Duration, handler: some SchedulerTimerHandler) -> any RearmableTimer
}

extension DateScheduler {
    /// Schedules `action` to run first after `delay`, then every `interval` on a fixed-rate grid.
    ///
    /// Tick k is due at `start + k·interval`; a tick may start up to `leeway` late so wake-ups can
    /// be coalesced. When the scheduler falls behind, missed ticks are skipped: one tick runs and
    /// the next is due at the next grid point. Disposing (also from inside a tick) stops all
    /// future ticks. A non-positive `interval` or a negative `leeway` stops the program.
    @discardableResult
    public func schedule(
        after delay: Duration,
        repeatingEvery interval: Duration,
        leeway: Duration = .zero,
        _ action: @escaping @Sendable () -> Void
    ) -> any Disposable {
        let call = "schedule(after:repeatingEvery:leeway:)"
        return schedule(checkedSchedule(.after(delay), interval, leeway, call: call), action)
    }

    /// Like ``schedule(after:repeatingEvery:leeway:_:)``, with the first tick at the wall-clock
    /// `date`; later ticks follow the monotonic grid from that first tick. A non-finite `date`
    /// stops the program too.
    @discardableResult
    public func schedule(
        at date: Date,
        repeatingEvery interval: Duration,
        leeway: Duration = .zero,
        _ action: @escaping @Sendable () -> Void
    ) -> any Disposable {
        let call = "schedule(at:repeatingEvery:leeway:)"
        return schedule(checkedSchedule(.at(date), interval, leeway, call: call), action)
    }

    /// `TypeName.method`, for the bad-input messages.
    package func name(_ method: String) -> String {
        "\(BadInput.typeName(self)).\(method)"
    }

    /// The one way a periodic call of this scheduler makes its ``PeriodicSchedule``: checked, and
    /// on bad input stopping the program with a message that names `TypeName.call` (`call` is the
    /// call's name without the type, such as `schedule(after:repeatingEvery:leeway:)`), the name
    /// built only then.
    package func checkedSchedule(
        _ start: TimerStart,
        _ interval: Duration,
        _ leeway: Duration,
        call: String,
        file: StaticString = #fileID,
        line: UInt = #line
    ) -> PeriodicSchedule {
        PeriodicSchedule(start, interval: interval, leeway: leeway, method: name(call), file: file, line: line)
    }
}
