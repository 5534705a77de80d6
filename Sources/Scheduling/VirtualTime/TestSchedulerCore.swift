import Foundation

/// One entry of a ``TestScheduler``; also its disposable.
// Every mutable field is guarded by the owning core's mutex.
final class TestTimer: IndexedHeapEntry, DisposeOutcomeReporting, RearmableTimer, @unchecked Sendable {
    let core: TestSchedulerCore
    var deadline: Int64
    var sequence: UInt64
    var heapIndex = -1
    let interval: Int64
    var action: (@Sendable () -> Void)?
    var disposed = false
    /// The runtime's id of the task whose job this entry runs; 0 for any other action.
    let taskID: UInt64

    init(
        core: TestSchedulerCore,
        deadline: Int64,
        sequence: UInt64,
        interval: Int64,
        taskID: UInt64 = 0,
        action: @escaping @Sendable () -> Void
    ) {
        self.core = core
        self.deadline = deadline
        self.sequence = sequence
        self.interval = interval
        self.taskID = taskID
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

struct TestState: ~Copyable {
    var now: Int64
    var instantLimit = TestSchedulerCore.defaultInstantLimit
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

/// What stopped ``TestSchedulerCore/advance(to:as:)`` before its target: actions that kept the
/// clock at one instant.
struct TestSchedulerSpinReport {
    /// The instant the clock stayed at.
    let now: Int64
    /// The actions run there in a row.
    let actionCount: Int
    /// The task whose job ran last (the spinning one); 0 when the last action was not a job.
    let taskID: UInt64
}

// The mutable state lives in a Mutex; the class only adds identity for the entries to point at.
final class TestSchedulerCore: @unchecked Sendable {
    let state: LockedValue<TestState>
    static let runLimit = 1_000_000
    /// Actions run in a row at one virtual instant by one `advance` before it gives up: a member
    /// spinning (a loop on `Task.yield()`) or an action that reschedules itself at once never lets
    /// the clock move. The clock moving resets the count, so a periodic timer over any span runs.
    static let defaultInstantLimit = 1_000_000

    init(now: Int64) {
        state = LockedValue(TestState(now: now))
    }

    var nowNanoseconds: Int64 { state.withLock { $0.now } }
    var pendingCount: Int { state.withLock { $0.heap.count } }
    var nextDeadline: Int64? { state.withLock { $0.heap.firstKey?.deadline } }

    @discardableResult
    func insert(
        dueIn delay: Int64,
        interval: Int64,
        taskID: UInt64 = 0,
        _ action: __owned @escaping @Sendable () -> Void
    ) -> TestTimer {
        state.withLock { state in
            let timer = TestTimer(
                core: self,
                deadline: Nanoseconds.adding(state.now, delay),
                sequence: state.nextSequence(),
                interval: interval,
                taskID: taskID,
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

    /// Pops the first entry if `isDue` says so, moving `now` to its deadline; returns it with its
    /// action and the new `now`.
    private func popFirst(
        where isDue: (TestTimer, Int64) -> Bool
    ) -> (TestTimer, @Sendable () -> Void, now: Int64)? {
        state.withLock { state in
            guard let first = state.heap.first, isDue(first, state.now) else { return nil }
            state.remove(first)
            state.now = max(state.now, first.deadline)
            guard let action = first.action else { return nil }
            if first.interval == 0 { first.action = nil }
            return (first, action, state.now)
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

    /// Runs what is due up to `requested` and moves the clock there; stops early, leaving the
    /// clock and what is pending as they are, when the instant limit's worth of actions ran
    /// without the clock moving.
    func advance(to requested: Int64, as scheduler: TestScheduler) -> TestSchedulerSpinReport? {
        // Time never moves backwards: an earlier target runs what is due now.
        let (start, limit) = state.withLock { ($0.now, $0.instantLimit) }
        let target = max(requested, start)
        var instant = start
        var ranAtInstant = 0
        while let (timer, action, now) = popFirst(where: { first, _ in first.deadline <= target }) {
            if now != instant {
                instant = now
                ranAtInstant = 0
            }
            run(timer, action, as: scheduler)
            ranAtInstant += 1
            // Checked after running, before popping the next: what is pending stays pending.
            if ranAtInstant >= limit {
                return TestSchedulerSpinReport(now: instant, actionCount: ranAtInstant, taskID: timer.taskID)
            }
        }
        state.withLock { $0.now = max($0.now, target) }
        return nil
    }

    func step(as scheduler: TestScheduler) -> Bool {
        guard let (timer, action, _) = popFirst(where: { _, _ in true }) else { return false }
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
