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

    /// Makes a scheduler whose virtual clock starts at `now`.
    public init(now: Date = Date(timeIntervalSinceReferenceDate: 0)) {
        BadInput.checkDate(now, method: "TestScheduler.init(now:)", parameter: "now")
        core = TestSchedulerCore(now: Nanoseconds.sinceEpoch(now))
        actorExecutor.bind(to: self)
    }

    deinit {
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
    public func advance(by duration: Duration = .zero) {
        let target = Nanoseconds.adding(core.nowNanoseconds, Nanoseconds.delay(duration))
        core.advance(to: target, as: self)
    }

    /// Moves virtual time forward to `date`, running every action due on the way. A date before
    /// `now` runs what is due now and leaves `now` where it is.
    public func advance(to date: Date) {
        BadInput.checkDate(date, method: "TestScheduler.advance(to:)", parameter: "to")
        core.advance(to: Nanoseconds.sinceEpoch(date), as: self)
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

/// One entry of a ``TestScheduler``; also its disposable.
// Every mutable field is guarded by the owning core's mutex.
private final class TestTimer: IndexedHeapEntry, DisposeOutcomeReporting, RearmableTimer, @unchecked Sendable {
    let core: TestSchedulerCore
    var deadline: Int64
    var sequence: UInt64
    var heapIndex = -1
    let interval: Int64
    var action: (@Sendable () -> Void)?
    var disposed = false

    init(
        core: TestSchedulerCore,
        deadline: Int64,
        sequence: UInt64,
        interval: Int64,
        action: @escaping @Sendable () -> Void
    ) {
        self.core = core
        self.deadline = deadline
        self.sequence = sequence
        self.interval = interval
        self.action = action
    }

    var isDisposed: Bool { core.state.withLock { _ in disposed } }

    func dispose() {
        _ = disposeReportingPending()
    }

    /// Moves a pending one-shot timer to `now + delay`, keeping its sequence (its place among
    /// equal deadlines).
    func rearm(after delay: Duration) -> Bool {
        rearm { now in Nanoseconds.adding(now, Nanoseconds.delay(delay)) }
    }

    /// Moves a pending one-shot timer to `date` (the current virtual time if `date` is past).
    func rearm(at date: Date) -> Bool {
        BadInput.checkDate(date, method: "TestScheduler's RearmableTimer.rearm(at:)")
        let deadline = Nanoseconds.sinceEpoch(date)
        return rearm { now in max(deadline, now) }
    }

    private func rearm(_ newDeadline: (Int64) -> Int64) -> Bool {
        core.state.withLock { state in
            // In the heap means not started: a running or finished action was popped first.
            guard !disposed, heapIndex >= 0, interval == 0 else { return false }
            state.heap.remove(self)
            deadline = newDeadline(state.now)
            state.heap.insert(self)
            return true
        }
    }

    func disposeReportingPending() -> Bool {
        let (wasPending, action) = core.state.withLock { state -> (Bool, (@Sendable () -> Void)?) in
            guard !disposed else { return (false, nil) }
            disposed = true
            // Waiting in the heap means not started: a running action was popped first.
            let wasPending = heapIndex >= 0
            state.remove(self)
            return (wasPending, self.action.take())
        }
        _ = action  // released here, outside the lock: its captures' deinit may schedule
        return wasPending
    }
}

private struct TestState: ~Copyable {
    var now: Int64
    var sequence: UInt64 = 0
    var heap = IndexedHeap<TestTimer>()
    var oneShotCount = 0

    mutating func remove(_ timer: TestTimer) {
        guard timer.heapIndex >= 0 else { return }
        heap.remove(timer)
        if timer.interval == 0 { oneShotCount -= 1 }
    }

    mutating func insert(_ timer: TestTimer) {
        heap.insert(timer)
        if timer.interval == 0 { oneShotCount += 1 }
    }

    mutating func nextSequence() -> UInt64 {
        defer { sequence &+= 1 }
        return sequence
    }
}

// The mutable state lives in a Mutex; the class only adds identity for the entries to point at.
private final class TestSchedulerCore: @unchecked Sendable {
    let state: LockedValue<TestState>
    static let runLimit = 1_000_000

    init(now: Int64) {
        state = LockedValue(TestState(now: now))
    }

    var nowNanoseconds: Int64 { state.withLock { $0.now } }
    var pendingCount: Int { state.withLock { $0.heap.count } }
    var nextDeadline: Int64? { state.withLock { $0.heap.firstKey?.deadline } }

    @discardableResult
    func insert(dueIn delay: Int64, interval: Int64, _ action: __owned @escaping @Sendable () -> Void) -> TestTimer {
        state.withLock { state in
            let timer = TestTimer(
                core: self,
                deadline: Nanoseconds.adding(state.now, delay),
                sequence: state.nextSequence(),
                interval: interval,
                action: action
            )
            state.insert(timer)
            return timer
        }
    }

    @discardableResult
    func insert(dueAt deadline: Int64, interval: Int64, _ action: __owned @escaping @Sendable () -> Void) -> TestTimer {
        state.withLock { state in
            // A past date runs at `now`; a periodic one keeps the grid of its date.
            let due =
                interval > 0
                ? PeriodicGrid.latestPoint(origin: deadline, interval: interval, notAfter: state.now)
                : max(deadline, state.now)
            let timer = TestTimer(
                core: self,
                deadline: due,
                sequence: state.nextSequence(),
                interval: interval,
                action: action
            )
            state.insert(timer)
            return timer
        }
    }

    func removeAll() {
        let timers = state.withLock { state in
            state.oneShotCount = 0
            return state.heap.removeAll()
        }
        for timer in timers { timer.dispose() }
    }

    /// Pops the first entry if `isDue` says so, moving `now` to its deadline.
    private func popFirst(
        where isDue: (TestTimer, Int64) -> Bool
    ) -> (TestTimer, @Sendable () -> Void)? {
        state.withLock { state in
            guard let first = state.heap.first, isDue(first, state.now) else { return nil }
            state.remove(first)
            state.now = max(state.now, first.deadline)
            guard let action = first.action else { return nil }
            if first.interval == 0 { first.action = nil }
            return (first, action)
        }
    }

    /// Runs one popped entry and re-arms it if it is periodic and still active.
    private func run(_ timer: TestTimer, _ action: @Sendable () -> Void, as scheduler: TestScheduler) {
        CurrentScheduler.withCurrent(scheduler, action)
        guard timer.interval > 0 else { return }
        state.withLock { state in
            guard !timer.disposed else { return }
            // The one grid rule (virtual time never falls behind, so it never skips here).
            let grid = PeriodicGrid(origin: timer.deadline, interval: timer.interval)
            timer.deadline = grid.next(after: 0, now: state.now).deadline
            timer.sequence = state.nextSequence()
            state.insert(timer)
        }
    }

    func advance(to requested: Int64, as scheduler: TestScheduler) {
        // Time never moves backwards: an earlier target runs what is due now.
        let target = max(requested, nowNanoseconds)
        while let (timer, action) = popFirst(where: { first, _ in first.deadline <= target }) {
            run(timer, action, as: scheduler)
        }
        state.withLock { $0.now = max($0.now, target) }
    }

    func step(as scheduler: TestScheduler) -> Bool {
        guard let (timer, action) = popFirst(where: { _, _ in true }) else { return false }
        run(timer, action, as: scheduler)
        return true
    }

    func run(as scheduler: TestScheduler) {
        var ran = 0
        while state.withLock({ $0.oneShotCount > 0 }) {
            guard step(as: scheduler) else { return }
            ran += 1
            if ran >= Self.runLimit {
                fatalError(
                    "TestScheduler.run(): ran \(Self.runLimit) actions without settling; "
                        + "something keeps scheduling one-shot work (use advance(by:) or step() instead)"
                )
            }
        }
    }
}
