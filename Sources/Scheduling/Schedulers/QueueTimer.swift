import Synchronization

/// One entry of a ``DispatchTimerQueue``, one-shot or periodic: the heap entry and the returned
/// disposable, so a timer costs one object besides its closure.
///
/// The closure is owned through the ``ActionLifecycle`` state machine: whoever wins the transition
/// out of `pending` (the runner or the disposer) owns it, so disposing releases it at once without
/// a lock, and a timer disposed before it started never starts. A periodic timer disposed during a
/// tick is released by the runner when the tick returns, and is not re-inserted.
// `deadline`, `sequence`, `heapIndex`, `isWall`, `grid` and `tick` are only touched under the timer
// queue's mutex (or before the entry is shared); `action` is guarded by `state` (see above).
final class QueueTimer: IndexedHeapEntry, DisposeOutcomeReporting, @unchecked Sendable {
    private let timers: DispatchTimerQueue
    private let owner: any Scheduler
    private(set) var deadline: Int64
    var sequence: UInt64 = 0
    var heapIndex = -1
    /// Whether the entry waits in the wall-clock heap: a one-shot `at:` timer, or a periodic
    /// `at:` timer before its first tick.
    private(set) var isWall: Bool
    /// A periodic timer's grid (on the wall clock until its first tick, then monotonic); nil for
    /// a one-shot timer. Never changes from nil to non-nil or back.
    private(set) var grid: PeriodicGrid?
    /// The index on `grid` of the tick due at `deadline`.
    private var tick: Int64 = 0
    /// A periodic timer's coalescing allowance in nanoseconds (see ``DispatchTimerQueue``).
    let leeway: Int64
    private let state = Atomic<UInt8>(ActionLifecycle.pending)
    private var action: (@Sendable () -> Void)?

    init(
        timers: DispatchTimerQueue,
        owner: any Scheduler,
        deadline: Int64,
        wall: Bool,
        grid: PeriodicGrid? = nil,
        leeway: Int64 = 0,
        action: @escaping @Sendable () -> Void
    ) {
        self.timers = timers
        self.owner = owner
        self.deadline = deadline
        self.isWall = wall
        self.grid = grid
        self.leeway = leeway
        self.action = action
    }

    var isDisposed: Bool { ActionLifecycle.isDisposed(state) }

    func dispose() {
        _ = disposeReportingPending()
    }

    func disposeReportingPending() -> Bool {
        switch ActionLifecycle.dispose(state) {
        case .wasPending:
            action = nil
            timers.remove(self)
            return true
        case .wasRunning, .nothingToDo:
            // A running tick's closure is released by the runner when the tick returns.
            return false
        }
    }

    /// Runs a one-shot timer, unless it was disposed first.
    func runOnce() {
        guard ActionLifecycle.claimRun(state) else { return }
        let action = self.action.take()
        if let action { CurrentScheduler.withCurrent(owner, action) }
    }

    /// Runs one periodic tick, unless the timer was disposed first.
    ///
    /// - Returns: whether the timer is still active after the tick.
    func runTick() -> Bool {
        guard ActionLifecycle.claimTick(state) else { return false }
        if let action { CurrentScheduler.withCurrent(owner, action) }
        guard ActionLifecycle.endTick(state) else {
            action = nil
            return false
        }
        return true
    }

    /// Called under the timer queue's lock when a wall-clock entry is popped as due. A periodic
    /// timer's grid becomes monotonic from here: it stands at the latest grid point of its date not
    /// after now (the deadline is already that point or later, so a date long past cannot push
    /// the arithmetic into a stream of past deadlines).
    func leaveWallClock(wallNow: Int64, monotonicNow: Int64) {
        guard let wallGrid = grid else { return }
        let lateness = max(0, Nanoseconds.subtracting(wallNow, deadline))
        grid = PeriodicGrid(
            origin: Nanoseconds.subtracting(monotonicNow, lateness % wallGrid.interval),
            interval: wallGrid.interval
        )
        tick = 0
        isWall = false
    }

    /// Called under the timer queue's lock after a tick that ended at `now` (monotonic): moves
    /// `deadline` to the next grid point after the tick, skipping the ones already past.
    func advance(after now: Int64) {
        guard let grid else { return }
        let next = grid.next(after: tick, now: now)
        tick = next.index
        deadline = next.deadline
    }
}
