import Foundation

/// A one-shot timer whose deadline can be moved — pushed back, most often — without a new timer:
/// the idle timeout of a connection, a session or a lease, re-armed on every request.
///
/// ```swift
/// let idle = loop.scheduleRearmable(after: .seconds(30)) { connection.close() }
/// // on every request: the timer moves in place (false once it ran or was disposed: then
/// // schedule a new one if the connection is still wanted)
/// idle.rearm(after: .seconds(30))
/// // when the connection closes first:
/// idle.dispose()
/// ```
///
/// The rule (<doc:BehaviourContract>, rule 13):
/// - ``rearm(after:)`` on a timer that is still pending returns `true`: its action runs once, no
///   earlier than the new deadline (and up to its leeway late), and never at the old one.
/// - On a timer that was disposed, that already ran, or whose action is running, it returns
///   `false` and changes nothing: a timer runs at most once, and disposing ends it for good.
/// - Racing the old deadline on another thread, exactly one of the two wins: the re-arm (it
///   returns `true`, the action runs once, at the new deadline) or the firing (it returns `false`,
///   the action ran, or runs, at the old one). Never lost, never run twice.
/// - Racing a `dispose()` on another thread: if the dispose comes first, the re-arm returns `false`;
///   either way the action never runs once `dispose()` has returned.
/// - Two re-arms of one timer at once, on different threads: both return `true`, and the action
///   runs once, at the deadline of the one that finished last.
/// - Among timers due at the same time, a re-armed timer keeps the place of its first scheduling
///   (rule 3: equal deadlines run in scheduling order, and re-arming does not reschedule it).
///
/// A timer keeps the clock it was made with: ``rearm(after:)`` on a timer made with `at:` re-arms
/// it to the wall-clock date `now + delay`, and ``rearm(at:)`` on one made with `after:` re-arms it
/// to the monotonic delay from now to `date`.
public protocol RearmableTimer: Disposable {
    /// Moves the deadline to `delay` after this call, by the scheduler's monotonic clock (a negative
    /// delay means now; a saturating one, never until re-armed or disposed).
    ///
    /// - Returns: `true` if the timer was pending: its action runs once, no earlier than the new
    ///   deadline. `false` if it was disposed, had run or is running: nothing changes.
    @discardableResult
    func rearm(after delay: Duration) -> Bool

    /// Moves the deadline to the wall-clock `date` (a past date means now).
    ///
    /// - Returns: as ``rearm(after:)``.
    /// - Precondition: `date` is finite (stops the program otherwise, rule 9).
    @discardableResult
    func rearm(at date: Date) -> Bool
}

extension DateScheduler {
    /// Schedules `action` to start no earlier than `delay` after this call, on a timer whose
    /// deadline ``RearmableTimer/rearm(after:)`` moves in place. See ``RearmableTimer``.
    @discardableResult
    public func scheduleRearmable(
        after delay: Duration,
        _ action: __owned @escaping @Sendable () -> Void
    ) -> any RearmableTimer {
        scheduleRearmable(.after(delay), leeway: .zero, consume action)
    }

    /// Schedules `action` to start no earlier than the wall clock reaching `date`, on a timer whose
    /// deadline ``RearmableTimer/rearm(at:)`` moves in place. A non-finite `date` stops the program.
    @discardableResult
    public func scheduleRearmable(
        at date: Date,
        _ action: __owned @escaping @Sendable () -> Void
    ) -> any RearmableTimer {
        BadInput.checkDate(date, method: name("scheduleRearmable(at:_:)"))
        return scheduleRearmable(.at(date), leeway: .zero, consume action)
    }

    /// Calls `handler.timerFired()` no earlier than `delay` after this call, up to `leeway` late,
    /// on a timer whose deadline ``RearmableTimer/rearm(after:)`` moves in place; the handler stays
    /// the same across re-arms. A negative `leeway` stops the program.
    @discardableResult
    public func scheduleRearmable(
        after delay: Duration,
        leeway: Duration = .zero,
        handler: some SchedulerTimerHandler
    ) -> any RearmableTimer {
        BadInput.checkLeeway(leeway, method: name("scheduleRearmable(after:leeway:handler:)"))
        return scheduleRearmable(.after(delay), leeway: leeway, handler: handler)
    }

    /// The default for schedulers without timers of their own that move: a timer disposed and
    /// scheduled again at each re-arm (a new timer per re-arm), with the same promises.
    @discardableResult
    public func scheduleRearmable(
        _ start: TimerStart,
        leeway: Duration,
        _ action: __owned @escaping @Sendable () -> Void
    ) -> any RearmableTimer {
        ReschedulingTimer(scheduler: self, start: start, fire: consume action)
    }

    /// The default for the handler form: the scheduler's closure form around the handler (a
    /// scheduler that shuts down tells it through
    /// ``SchedulerTimerHandler/timerCancelledByScheduler()`` only if it implements this itself).
    @discardableResult
    public func scheduleRearmable(
        _ start: TimerStart,
        leeway: Duration,
        handler: some SchedulerTimerHandler
    ) -> any RearmableTimer {
        scheduleRearmable(start, leeway: leeway) { handler.timerFired() }
    }
}

/// The default re-armable timer: each re-arm disposes the current timer and schedules a new one,
/// with a generation number so that an old timer that fires as it is replaced does nothing. The
/// scheduler is called outside the lock (a scheduler may run a due action inline).
final class ReschedulingTimer: RearmableTimer, Sendable {
    private struct State {
        var fire: (@Sendable () -> Void)?
        var current: (any Disposable)?
        var generation: UInt64 = 0
        var disposed = false
        /// The clock the timer was made with: a re-arm keeps it.
        let isWall: Bool
    }

    private let scheduler: any DateScheduler
    private let state: LockedValue<State>

    init(scheduler: any DateScheduler, start: TimerStart, fire: @escaping @Sendable () -> Void) {
        self.scheduler = scheduler
        let isWall: Bool
        if case .at = start { isWall = true } else { isWall = false }
        state = LockedValue(State(fire: fire, isWall: isWall))
        install(arm(start, generation: 0), generation: 0)
    }

    private func arm(_ start: TimerStart, generation: UInt64) -> any Disposable {
        let run: @Sendable () -> Void = { [self] in
            let fire = state.withLock { state -> (@Sendable () -> Void)? in
                guard state.generation == generation else { return nil }
                state.current = nil
                return state.fire.take()
            }
            fire?()
        }
        switch start {
        case .after(let delay): return scheduler.schedule(after: delay, run)
        case .at(let date): return scheduler.schedule(at: date, run)
        }
    }

    /// Keeps `timer` as the current one if no later re-arm or dispose came meanwhile, else
    /// disposes it.
    private func install(_ timer: any Disposable, generation: UInt64) {
        let kept = state.withLock { state -> Bool in
            guard state.generation == generation, state.fire != nil else { return false }
            state.current = timer
            return true
        }
        if !kept { timer.dispose() }
    }

    func rearm(after delay: Duration) -> Bool {
        rearm { isWall in
            isWall ? .at(scheduler.now.addingTimeInterval(Double(Nanoseconds.of(delay)) / 1e9)) : .after(delay)
        }
    }

    func rearm(at date: Date) -> Bool {
        BadInput.checkDate(date, method: "RearmableTimer.rearm(at:)")
        return rearm { isWall in isWall ? .at(date) : .after(.seconds(date.timeIntervalSince(scheduler.now))) }
    }

    private func rearm(_ start: (Bool) -> TimerStart) -> Bool {
        let claimed = state.withLock { state -> (old: (any Disposable)?, generation: UInt64, isWall: Bool)? in
            // Pending: the action is still here (a timer that started it took it).
            guard state.fire != nil else { return nil }
            state.generation &+= 1
            return (state.current.take(), state.generation, state.isWall)
        }
        guard let claimed else { return false }
        claimed.old?.dispose()
        install(arm(start(claimed.isWall), generation: claimed.generation), generation: claimed.generation)
        return true
    }

    var isDisposed: Bool { state.withLock { $0.disposed } }

    func dispose() {
        let (fire, current) = state.withLock { state in
            state.generation &+= 1
            state.disposed = true
            return (state.fire.take(), state.current.take())
        }
        current?.dispose()
        _ = fire
    }
}
