import Foundation
import Synchronization

/// A scheduler on virtual time, for tests (the double of NIO's `EmbeddedEventLoop`).
///
/// Nothing runs until you call ``advance(by:)``, ``advance(to:)``, ``step()`` or ``run()``, on the
/// calling thread. Actions run in (due time, scheduling order); ``now`` moves forward to each
/// action's due time as it runs and never moves backwards, so a past date runs at the current
/// `now`. While it runs an action it is ``Schedulers/current``. Scheduling and disposing are
/// thread-safe; disposing removes the entry and releases its closure at once.
///
/// ```swift
/// let scheduler = TestScheduler()
/// scheduler.schedule(after: .seconds(5)) { fired = true }
/// scheduler.advance(by: .seconds(4))   // not yet
/// scheduler.advance(by: .seconds(1))   // fires, with `now` at 5 s
/// ```
///
/// Periodic timers tick at every grid point as virtual time passes (virtual time never falls
/// behind, so no tick is ever skipped).
public final class TestScheduler: DateScheduler {
    private let core: TestSchedulerCore
    /// The executor of actors pinned to this scheduler (see `asUnownedSerialExecutor()`).
    package let actorExecutor = ActorExecutor()
    /// Whether the task capture has a scope for this scheduler (set once, by the first `drive`):
    /// only then does the deinit take the capture's registry lock.
    let hasDriveScope = Atomic<Bool>(false)

    /// Makes a scheduler whose virtual clock starts at `now`.
    public init(now: Date = Date(timeIntervalSinceReferenceDate: 0)) {
        BadInput.checkDate(now, method: "TestScheduler.init(now:)", parameter: "now")
        core = TestSchedulerCore(now: Nanoseconds.sinceEpoch(now))
        actorExecutor.bind(to: self)
    }

    deinit {
        #if DEBUG
        // Releasing a scheduler inside the capture's registry lock releases its pending closures
        // there, and a closure whose release enqueues a job re-enters the lock: a hang.
        if TaskCapture.isInsideRegistry {
            fatalError(
                "TestScheduler released inside the task capture's registry lock "
                    + "(a bug in Scheduling: its pending closures' releases could re-enter the lock and hang)"
            )
        }
        #endif
        // The scope goes first, so what the closures' releases enqueue passes the hook by.
        if hasDriveScope.load(ordering: .acquiring) { TaskCapture.schedulerReleased(ObjectIdentifier(self)) }
        core.removeAll()
    }

    /// The virtual clock.
    public var now: Date {
        Nanoseconds.date(sinceEpoch: core.nowNanoseconds)
    }

    /// Virtual time in nanoseconds since 1970, the epoch of every scheduler's clocks, exactly (a
    /// `Date` rounds to about 100 ns this far from its epoch).
    package var virtualNanoseconds: Int64 { core.nowNanoseconds }

    /// Actions waiting to run, periodic timers included.
    public var pendingCount: Int { core.pendingCount }

    /// The virtual time of the first waiting action, in nanoseconds since 1970; nil when none waits.
    package var nextDeadline: Int64? { core.nextDeadline }

    /// Schedules `action` at the current virtual time.
    @discardableResult
    public func schedule(_ action: __owned @escaping @Sendable () -> Void) -> any Disposable {
        core.insert(dueIn: 0, interval: 0, action)
    }

    /// Schedules `action` `delay` after the current virtual time (a negative delay means now).
    @discardableResult
    public func schedule(after delay: Duration, _ action: __owned @escaping @Sendable () -> Void) -> any Disposable {
        core.insert(dueIn: Nanoseconds.delay(delay), interval: 0, action)
    }

    /// Schedules `action` at virtual time `date`, or now if `date` is past.
    @discardableResult
    public func schedule(at date: Date, _ action: __owned @escaping @Sendable () -> Void) -> any Disposable {
        BadInput.checkDate(date, method: "TestScheduler.schedule(at:)")
        return core.insert(dueAt: Nanoseconds.sinceEpoch(date), interval: 0, action)
    }

    /// Schedules a periodic action on virtual time (see ``DateScheduler/schedule(_:_:)``). The
    /// leeway is accepted and ignored: virtual time is never late.
    @discardableResult
    public func schedule(_ schedule: PeriodicSchedule, _ action: __owned @escaping @Sendable () -> Void) -> any Disposable {
        switch schedule.start {
        case .after(let delay):
            core.insert(dueIn: Nanoseconds.delay(delay), interval: schedule.intervalNanoseconds, action)
        case .at(let date):
            core.insert(dueAt: Nanoseconds.sinceEpoch(date), interval: schedule.intervalNanoseconds, action)
        }
    }

    /// Schedules `action` once at virtual time `start`, on a timer that ``RearmableTimer/rearm(after:)``
    /// moves in place. The leeway is accepted and ignored: virtual time is never late.
    @discardableResult
    public func scheduleRearmable(
        _ start: TimerStart,
        leeway: Duration,
        _ action: __owned @escaping @Sendable () -> Void
    ) -> any RearmableTimer {
        switch start {
        case .after(let delay): return core.insert(dueIn: Nanoseconds.delay(delay), interval: 0, action)
        case .at(let date):
            BadInput.checkDate(date, method: "TestScheduler.scheduleRearmable(at:)")
            return core.insert(dueAt: Nanoseconds.sinceEpoch(date), interval: 0, action)
        }
    }

    /// Moves virtual time forward by `duration` (a negative one counts as zero), running every
    /// action due on the way, each at its own due time; `now` ends at the old `now` + `duration`.
    ///
    /// If it runs 1,000,000 actions in a row without the clock moving — a task that loops on
    /// `Task.yield()` waiting for something only a later time brings, or an action that
    /// schedules itself again at once — it stops the program with a message saying so, naming
    /// the task, rather than hang. Actions at different times do not count toward the limit:
    /// advancing an hour over a 1 ms periodic timer runs all 3,600,000 ticks.
    public func advance(by duration: Duration = .zero) {
        let target = Nanoseconds.adding(core.nowNanoseconds, Nanoseconds.delay(duration))
        trapOnSpin(core.advance(to: target, as: self), method: "advance(by:)")
    }

    /// Moves virtual time forward to `date`, running every action due on the way. A date before
    /// `now` runs what is due now and leaves `now` where it is.
    ///
    /// Stops the program, as ``advance(by:)`` does, after 1,000,000 actions in a row without the
    /// clock moving.
    public func advance(to date: Date) {
        BadInput.checkDate(date, method: "TestScheduler.advance(to:)", parameter: "to")
        trapOnSpin(core.advance(to: Nanoseconds.sinceEpoch(date), as: self), method: "advance(to:)")
    }

    /// Runs what is due at the current virtual time; reports a spin instead of stopping the program
    /// (``drive(_:)`` throws it).
    func runDue() -> TestSchedulerSpinReport? {
        core.advance(to: core.nowNanoseconds, as: self)
    }

    private func trapOnSpin(_ spin: TestSchedulerSpinReport?, method: String) {
        guard let spin else { return }
        fatalError("TestScheduler.\(method): \(TestSchedulerSpin(spin).summary) (the limit stops a hang)")
    }

    /// Actions ``advance(by:)`` and ``drive(_:)`` run in a row at one virtual instant before they
    /// stop (default 1,000,000); tests of the limit lower it.
    package var instantActionLimit: Int {
        get { core.state.withLock { $0.instantLimit } }
        set { core.state.withLock { $0.instantLimit = max(1, newValue) } }
    }

    /// Schedules the job of the task `taskID` at the current virtual time (so a spin can name it).
    func scheduleJob(of taskID: UInt64, _ run: __owned @escaping @Sendable () -> Void) {
        core.insert(dueIn: 0, interval: 0, taskID: taskID, run)
    }

    /// Runs the next pending action whatever its due time, moving `now` to it if it is later.
    ///
    /// - Returns: false when nothing is pending.
    @discardableResult
    public func step() -> Bool {
        core.step(as: self)
    }

    /// Runs until no one-shot action is pending, periodic timers ticking along the way as time
    /// passes; far-future actions run too, and `now` ends at the last action's time.
    ///
    /// A periodic timer alone does not keep it going. If it has run 1,000,000 actions without
    /// settling (a recursion or a timer that keeps scheduling one-shot work), it stops the program
    /// with a message saying so rather than hang.
    public func run() {
        core.run(as: self)
    }
}
