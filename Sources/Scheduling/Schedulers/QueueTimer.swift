import Foundation

/// One entry of a ``DispatchTimerQueue``, one-shot or periodic: the heap entry and the returned
/// disposable (a ``ScheduledAction``, which owns the closure), so a timer costs one object besides
/// its closure. A periodic timer disposed during a tick is released by the runner when the tick
/// returns, and is not re-inserted.
// `deadline`, `sequence`, `heapIndex`, `isWall`, `grid` and `tick` are only touched under the timer
// queue's mutex (or before the entry is shared); `action` follows ScheduledAction's state machine.
final class QueueTimer: ScheduledAction, CoalescingTimer, IndexedHeapEntry, RearmableEntry, RearmableTimer, @unchecked Sendable {
    private let timers: DispatchTimerQueue
    /// The scheduler whose action the timer runs as (``CurrentScheduler``).
    let owner: any Scheduler
    /// Written under the timer queue's lock (a re-arm moves it: ``DispatchTimerQueue/rearm(_:to:)``).
    var deadline: Int64
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
    /// A periodic timer's coalescing allowance in nanoseconds (see ``TimerWake``).
    let leeway: Int64

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
        super.init(action: action)
    }

    override func didDispose() {
        timers.remove(self)
    }

    /// See ``RearmableTimer/rearm(after:)``: a wall-clock timer moves to the date `now + delay`.
    func rearm(after delay: Duration) -> Bool {
        let nanoseconds = Nanoseconds.delay(delay)
        return timers.rearm(self) { isWall in
            Nanoseconds.adding(isWall ? Nanoseconds.wallNow() : Nanoseconds.monotonicNow(), nanoseconds)
        }
    }

    /// See ``RearmableTimer/rearm(at:)``: a monotonic timer moves to the delay from now to `date`.
    func rearm(at date: Date) -> Bool {
        BadInput.checkDate(date, method: "\(BadInput.typeName(owner)).RearmableTimer.rearm(at:)")
        let target = Nanoseconds.sinceEpoch(date)
        return timers.rearm(self) { isWall in
            isWall
                ? target
                : Nanoseconds.adding(Nanoseconds.monotonicNow(), max(0, Nanoseconds.subtracting(target, Nanoseconds.wallNow())))
        }
    }

    /// Called under the timer queue's lock when a wall-clock entry is popped as due: a periodic
    /// timer's grid becomes monotonic from here (``PeriodicGrid/leavingWallClock(lateness:monotonicNow:)``).
    func leaveWallClock(wallNow: Int64, monotonicNow: Int64) {
        guard let wallGrid = grid else { return }
        let lateness = max(0, Nanoseconds.subtracting(wallNow, deadline))
        grid = wallGrid.leavingWallClock(lateness: lateness, monotonicNow: monotonicNow).grid
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
