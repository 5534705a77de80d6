@_spi(SchedulerEngine) import Scheduling

/// Where one LoopScheduler's timers are filed, and all the arithmetic about them: a loop-confined
/// value, unit-tested without a loop (Docs/Design.md §5.4, §5.7). A timer's path (schedule, file,
/// wake, re-arm, fire or cancel) is written down once, in ``TimerDriver``; the store's part in it:
///
/// - **Filing.** ``insert(_:)`` stamps the sequence number and puts the timer in the wall-clock
///   heap (`at:` timers), the monotonic heap (due within the horizon, the tick after the current
///   one), or a bucket of the ``TimerWheel`` in front of it; the deadline comes from
///   ``deadline(after:now:)`` on the monotonic clock read at the call, never libuv's cached time.
/// - **Waking.** ``nextWake(monotonicNow:wallNow:flushBy:)`` says when to arm the one driver: at
///   the first due timer (by ``TimerWake``'s rule), or when the wheel's next bucket must move, which
///   hands its timers to the heap (or down a level) with their exact `(deadline, sequence)`. A
///   timer that fires always fires from a heap.
/// - **Firing.** ``popDue(monotonicNow:limit:)`` and ``popDueWall(wallNow:limit:)`` in
///   `(deadline, sequence)` order; a periodic timer comes back through
///   ``reinsertAfterTick(_:monotonicNow:)`` at its next grid point.
/// - **Moving and leaving.** ``remove(_:)`` is O(1) in the wheel, O(log n) in a heap; a re-arm to
///   a later deadline in the wheel only writes it (``WheeledHeap/rearm(_:to:)``); ``reposition(_:)``,
///   ``refile(_:sequence:)`` and ``park(_:sequence:)`` are the re-arm protocol's (Docs/Design.md
///   §4.13). Emptied heaps give their memory back in ``giveBackMemory(monotonicNow:wallNow:)``.
///
/// - Complexity: a timer beyond the horizon is inserted and removed in O(1); the heaps' insert,
///   remove and pop are O(log n) on a 4-ary heap with the keys inline, n the timers due within
///   about two ticks (plus wall-clock ones and those beyond the wheel's 2^56 ns).
package struct DeadlineStore: ~Copyable {
    /// Timers on the monotonic clock, and periodic timers once their first tick ran: in the heap
    /// when due within the horizon (or beyond the wheel), in the wheel otherwise.
    private(set) var monotonic: WheeledHeap<LoopTimer>
    /// `at:` timers, in wall-clock nanoseconds since 1970, until they fire.
    private(set) var wall = IndexedHeap<LoopTimer>(shrinksOnRemoval: false)
    /// The next sequence number: ties between equal deadlines go to the earlier-scheduled timer.
    private(set) var nextSequence: UInt64 = 0
    /// The monotonic time the driver is armed for, or nil when it is not armed.
    private(set) var armedDeadline: Int64?
    #if DEBUG
    /// When debug builds check the invariants before arming (``assertSoundNowAndThen()``).
    private var sampler = InvariantSampler()
    #endif

    /// How often a wall-clock wait is re-checked at least, in case a clock step went unnoticed
    /// (the `uv_timer_t` driver has no cancel-on-set notification).
    static let wallRecheck: Int64 = 1_000_000_000
    /// How long nothing may be due before emptied heaps give memory back (see `giveBackMemory`).
    static let quietPeriod: Int64 = 50_000_000
    /// Slots a quiet heap keeps at most once it is sparse (1.5 KiB): a burst leaves nothing behind.
    static let keptSlots = 64

    /// How many slots of a big wheel bucket move down per look (`TimerWheel.Cascade`): 256 take
    /// some 10–25 µs, so the loop fires what is due between chunks instead of after a move of
    /// thousands of timers.
    static let cascadeBudget = 256

    /// See ``WheeledHeap/smallBucket``.
    static var smallBucket: Int { WheeledHeap<LoopTimer>.smallBucket }
    /// See ``WheeledHeap/defaultTickShift``.
    static var tickShift: Int { WheeledHeap<LoopTimer>.defaultTickShift }

    /// A store whose big wheel buckets move `cascadeBudget` slots per look (the static one, or
    /// fewer in the model tests; the wheel refuses 0).
    init(tickShift: Int = Self.tickShift, cascadeBudget: Int = Self.cascadeBudget) {
        monotonic = WheeledHeap(tickShift: tickShift, shrinksOnRemoval: false, cascadeBudget: cascadeBudget)
    }

    /// The wheel in front of the monotonic heap, for the tests.
    var wheel: TimerWheel<LoopTimer> {
        _read { yield monotonic.wheel }
    }

    var count: Int { monotonic.count + wall.count }
    /// Whether a big wheel bucket is moving down in chunks (`TimerWheel.Cascade`): the store
    /// asks to run again at once until it is done.
    var isCascading: Bool { monotonic.wheel.isCascading }
    /// Slots the heaps and the wheel hold allocated: for the memory tests.
    var slotCapacity: Int { monotonic.capacity + wall.storage.capacity }

    // MARK: 1. Schedule

    /// The deadline of a timer scheduled `delay` after `now`: negative delays mean now, huge ones
    /// saturate at ``Nanoseconds/never`` (pending until disposed, never armed).
    static func deadline(after delay: Duration, now: Int64) -> Int64 {
        Nanoseconds.adding(now, Nanoseconds.delay(delay))
    }

    mutating func insert(_ timer: LoopTimer) {
        let sequence = nextSequence
        nextSequence &+= 1
        if timer.isWall {
            wall.insert(timer, sequence: sequence)
            return
        }
        monotonic.insert(timer, sequence: sequence)
    }

    /// Removes a timer that is in the store: from the wheel at once, or from its heap. Returns
    /// false if it was not (it already fired, or the loop already removed it).
    @discardableResult
    mutating func remove(_ timer: LoopTimer) -> Bool {
        guard timer.isWall else { return monotonic.remove(timer) }
        guard timer.heapIndex >= 0 else { return false }
        wall.remove(timer)
        return true
    }

    /// Empties the heaps and the wheel (shutdown), leaving every slot at -1.
    mutating func removeAll() -> [LoopTimer] {
        monotonic.removeAll() + wall.removeAll()
    }

    // MARK: 2. Wake

    /// What the driver should do before the loop blocks.
    package enum Wake: Equatable {
        /// Nothing to arm: no timer, only saturated deadlines, or the armed wake-up serves.
        case keep
        /// A timer is already due, or a big wheel bucket is moving down in chunks: the loop must
        /// not block (the core starts its idle handle).
        case runNow
        /// Arm the driver to fire this many nanoseconds from now (at least 1).
        case arm(in: Int64)
    }

    /// When the loop must wake next, and records the arming: the monotonic timers' ``TimerWake``
    /// (leeway coalescing, and the wheel's next bucket reaching the heap in time), the first
    /// wall-clock timer converted to the monotonic clock and re-checked at least once a second, and
    /// `flushBy`, when given: the latest the loop may next look at its queue (``RemoteQueue``'s
    /// stragglers). An armed wake-up that serves all of them is kept.
    mutating func nextWake(
        monotonicNow: Int64,
        wallNow: @autoclosure () -> Int64,
        flushBy: Int64? = nil
    ) -> Wake {
        #if DEBUG
        assertSoundNowAndThen()
        #endif
        monotonic.advance(monotonicNow: monotonicNow, beforeSleeping: true)
        var wake = monotonic.wake ?? TimerWake(at: Nanoseconds.never)
        if let first = wall.firstKey, first.deadline != Nanoseconds.never {
            let remaining = min(Nanoseconds.subtracting(first.deadline, wallNow()), Self.wallRecheck)
            wake.include(Nanoseconds.adding(monotonicNow, remaining))
        }
        if let flushBy { wake.include(flushBy) }
        guard wake.target != Nanoseconds.never else { return .keep }
        if wake.target <= monotonicNow { return .runNow }
        if wake.isServed(byArmed: armedDeadline) { return .keep }
        armedDeadline = wake.target
        // Saturating: a deadline near `Int64.max` on a clock read below zero (an injected one).
        return .arm(in: Nanoseconds.subtracting(wake.target, monotonicNow))
    }

    /// The driver fired: nothing is armed any more.
    mutating func driverFired() {
        armedDeadline = nil
    }

    /// The wall clock was stepped: forget the arming so the next ``nextWake`` re-arms from the new
    /// reading.
    mutating func wallClockChanged() {
        armedDeadline = nil
    }

    // MARK: 3. Fire

    /// The first monotonic timer due at `monotonicNow` that was inserted before this pass began
    /// (`limit`, from ``nextSequence`` at the start of the pass): a timer that keeps re-arming
    /// itself at a zero delay waits for the next pass instead of starving the loop (libuv#4245).
    /// Returns it with its lateness.
    mutating func popDue(monotonicNow: Int64, limit: UInt64) -> (timer: LoopTimer, sequence: UInt64, lateness: Int64)? {
        // A cascade's chunks run in `nextWake`, once per loop iteration before it blocks, not one
        // per timer popped here (unless its first tick came: then all of it, now).
        monotonic.advance(monotonicNow: monotonicNow, continuesCascade: false)
        guard let key = monotonic.heap.firstKey, key.deadline <= monotonicNow, key.sequence < limit else { return nil }
        return (monotonic.heap.removeFirst()!, key.sequence, Nanoseconds.subtracting(monotonicNow, key.deadline))
    }

    /// The same for wall-clock timers, measured on the wall clock.
    mutating func popDueWall(wallNow: Int64, limit: UInt64) -> (timer: LoopTimer, sequence: UInt64, lateness: Int64)? {
        guard let key = wall.firstKey, key.deadline <= wallNow, key.sequence < limit else { return nil }
        return (wall.removeFirst()!, key.sequence, Nanoseconds.subtracting(wallNow, key.deadline))
    }

    /// A popped one-shot timer that is not due after all (a re-arm from another thread moved it
    /// later): back in, with the sequence it was first filed with.
    mutating func refile(_ timer: LoopTimer, sequence: UInt64) {
        if timer.isWall { wall.insert(timer, sequence: sequence) } else { monotonic.insert(timer, sequence: sequence) }
    }

    /// A popped one-shot timer whose deadline a re-arm on another thread is writing (it left the
    /// timer to that re-arm): filed with its sequence where it cannot come due, until the re-arm
    /// queues it and ``reposition(_:)`` files it by its new deadline. Until then the filed key
    /// (never) is later than the entry's deadline, and a dispose or shutdown finds it as usual.
    mutating func park(_ timer: LoopTimer, sequence: UInt64) {
        let reference = Unmanaged.passRetained(timer)
        if timer.isWall {
            wall.insert(retained: reference, deadline: Nanoseconds.never, sequence: sequence)
        } else {
            monotonic.heap.insert(retained: reference, deadline: Nanoseconds.never, sequence: sequence)
        }
    }

    /// Moves a filed one-shot timer to `deadline`, keeping its sequence: lazily when later and in
    /// the wheel (``WheeledHeap/rearm(_:to:)``), at once otherwise. A timer not in the store (queued
    /// from another thread, not filed yet) only takes the deadline, by which it is filed.
    mutating func rearm(_ timer: LoopTimer, to deadline: Int64) {
        if timer.isWall {
            let sequence = wall.take(timer)
            timer.deadline = deadline
            if let sequence { wall.insert(timer, sequence: sequence) }
        } else if !monotonic.rearm(timer, to: deadline) {
            timer.deadline = deadline
        }
    }

    /// Files a timer again by the deadline it has now (a re-arm from another thread moved it
    /// earlier), keeping its sequence; nothing if it is not in the store.
    mutating func reposition(_ timer: LoopTimer) {
        if timer.isWall {
            if let sequence = wall.take(timer) { wall.insert(timer, sequence: sequence) }
        } else {
            monotonic.reposition(timer)
        }
    }

    // MARK: Invariants

    /// Whether `timer`'s deadline may have been moved earlier in place by a re-arm the loop has yet
    /// to file: a one-shot timer of a loop, which another thread may re-arm (it writes the
    /// deadline, then queues the timer as ``LoopItem/rearmed(_:)``). Periodic timers, and the unit
    /// tests' timers of no loop, are re-armed by the store alone.
    static func mayAwaitRearm(_ timer: LoopTimer) -> Bool {
        timer.core != nil && !timer.isPeriodic
    }

    /// Every broken invariant of the wheel and the heaps (`WheeledHeap.invariantViolations`): a
    /// timer filed where it would fire after its deadline is late, unless `mayAwaitRearm` says a
    /// re-arm not filed yet may have moved it (then the deadline it was filed by counts).
    func invariantViolations(mayAwaitRearm: (LoopTimer) -> Bool = Self.mayAwaitRearm) -> [String] {
        monotonic.invariantViolations(mayAwaitRearm: mayAwaitRearm)
            + wall.invariantViolations(mayAwaitRearm: mayAwaitRearm)
    }

    #if DEBUG
    /// Debug builds, before the loop arms its wake-up: ``invariantViolations(mayAwaitRearm:)`` now
    /// and then (`InvariantSampler`), stopping the program if any is broken. The store stands still
    /// here; a re-arm from another thread may be on its way, which ``mayAwaitRearm(_:)`` allows for.
    private mutating func assertSoundNowAndThen() {
        monotonic.assertSound(with: wall, sampler: &sampler, mayAwaitRearm: Self.mayAwaitRearm, owner: "DeadlineStore")
    }
    #endif

    var hasWallTimers: Bool { !wall.isEmpty }
    var hasMonotonicTimers: Bool { !monotonic.isEmpty }

    /// Before the first tick of an `at:` periodic timer that fired `wallLateness` after its date:
    /// from here on its grid is monotonic (``PeriodicGrid/leavingWallClock(lateness:monotonicNow:)``),
    /// and the grid points already past count as missed.
    static func moveToMonotonicGrid(_ timer: PeriodicLoopTimer, wallLateness: Int64, monotonicNow: Int64) {
        let moved = timer.ticks.grid.leavingWallClock(lateness: wallLateness, monotonicNow: monotonicNow)
        timer.ticks = PeriodicLoopTimer.Ticks(grid: moved.grid, index: 0, missed: Int(clamping: moved.missed))
        timer.leaveWallClock()
    }

    /// After a tick that left the timer active: the next grid point after `monotonicNow`, skipping
    /// the ones already past (counted for the next tick), back into the heap.
    mutating func reinsertAfterTick(_ timer: PeriodicLoopTimer, monotonicNow: Int64) {
        let next = timer.ticks.grid.next(after: timer.ticks.index, now: monotonicNow)
        timer.ticks.index = next.index
        timer.ticks.missed = Int(clamping: next.skipped)
        timer.deadline = next.deadline
        insert(timer)
    }

    // MARK: 4. Memory

    /// Shrinks sparse heaps, but only when no timer is due within ``quietPeriod``: freeing a big
    /// array makes glibc consolidate every chunk freed since, a multi-millisecond stall after a
    /// burst that must not land in front of a due timer. A heap emptied by cancelling (the common
    /// case) shrinks in the very next iteration.
    ///
    /// - Returns: whether the loop is quiet (nothing due within ``quietPeriod``), so that the core
    ///   gives its own buffers back at the same moment.
    @discardableResult
    mutating func giveBackMemory(monotonicNow: Int64, wallNow: @autoclosure () -> Int64) -> Bool {
        // A wheel bucket about to move counts as due: moving a big one is work of its own.
        var soonest = min(monotonic.heap.firstKey?.deadline ?? .max, monotonic.nextAdvance)
        if let first = wall.firstKey {
            let remaining = Nanoseconds.subtracting(first.deadline, wallNow())
            soonest = min(soonest, Nanoseconds.adding(monotonicNow, remaining))
        }
        guard Nanoseconds.subtracting(soonest, monotonicNow) >= Self.quietPeriod else { return false }
        monotonic.shrink(keeping: Self.keptSlots)
        wall.shrinkIfSparse(minimumCapacity: Self.keptSlots)
        return true
    }
}
