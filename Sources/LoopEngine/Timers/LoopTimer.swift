import Foundation
@_spi(SchedulerEngine) import Scheduling
import Synchronization

/// A one-shot timer: a task with a deadline, 56 bytes — one 64-byte allocator chunk. Its
/// sequence number lives only in the heap's node, its slot in `LoopWork`'s padding.
///
/// Every one-shot timer can be re-armed (``RearmableTimer``). Its deadline is an atomic: written by
/// the loop's store, and by a re-arm on another thread between `ActionLifecycle.beginRearm` and
/// `endRearm`; the protocol (who may write it when, and how the loop learns of it) is written once,
/// in Docs/Design.md §4.13 ("Re-arm in place") and `ActionLifecycle+Rearm.swift`.
// Heap fields are loop-confined once published; the deadline is atomic; the rest follows
// LoopWork's state machine.
package class LoopTimer: LoopWork, CoalescingTimer, RearmableEntry, RearmableTimer, @unchecked Sendable {
    /// The engine to tell when the timer is disposed, so its slot is freed at once rather than at
    /// its deadline; nil only for entries made by the timer store's unit tests, which have no loop.
    final let core: LoopCore?
    /// The deadline: written by the loop and by re-arms on any thread (see the type's notes).
    private final let storedDeadline: Atomic<Int64>

    /// Monotonic nanoseconds, or wall-clock nanoseconds since 1970 while `isWall`. Final, so the
    /// heap reaches it without the vtable. The store's writes are loop-confined (debug builds check
    /// the loop thread); a re-arm from another thread writes it through ``exchangeDeadline(_:)``.
    package final var deadline: Int64 {
        @inline(__always) get {
            storedDeadline.load(ordering: .relaxed)
        }
        @inline(__always) set {
            assertConfined()
            storedDeadline.store(newValue, ordering: .relaxed)
        }
    }

    /// The deadline as the thread that made the entry reads it before publishing it (the remote
    /// queue's wake rule), or as a re-arm on another thread set it.
    final var deadlineBeforePublication: Int64 { storedDeadline.load(ordering: .relaxed) }

    /// A re-arm's write from another thread, between `ActionLifecycle.beginRearm` and `endRearm`
    /// (whose release publishes it). Returns the deadline it replaced — the loop's own latest write
    /// included — so that the re-arm queues the timer to be filed again exactly when the new
    /// deadline is earlier than the one the store may have filed it by (Design.md §4.13).
    @inline(__always)
    final func exchangeDeadline(_ deadline: Int64) -> Int64 {
        storedDeadline.exchange(deadline, ordering: .relaxed)
    }

    /// The timer's place in the store (a heap slot, a wheel position, or -1): loop-confined, in
    /// `LoopWork`'s padding.
    package final var heapIndex: Int {
        @inline(__always) get {
            assertConfined()
            return Int(slot)
        }
        @inline(__always) set {
            assertConfined()
            slot = Int32(truncatingIfNeeded: newValue)
        }
    }

    /// Debug builds stop the program when a published timer's store fields are reached off its
    /// loop's thread. Timers of the store's unit tests have no loop.
    @inline(__always)
    final func assertConfined(_ function: StaticString = #function) {
        #if DEBUG
        core?.loopThread.assertCurrent("LoopTimer", function)
        #endif
    }

    /// An `at:` periodic timer's first tick ran: from here its deadlines are monotonic.
    final func leaveWallClock() {
        assertConfined()
        isWall = false
    }

    init(core: LoopCore?, deadline: Int64, isWall: Bool, isPeriodic: Bool = false, action: (@Sendable () -> Void)?) {
        self.core = core
        self.storedDeadline = Atomic(deadline)
        super.init(action: action, isPeriodic: isPeriodic, isWall: isWall)
    }

    /// A disposed timer leaves the store at once (on the loop thread) or when the loop next looks
    /// at its queue, not at its deadline.
    override public final func didDispose() {
        core?.timerDisposed(self)
    }

    /// How late a tick may start, for coalescing wake-ups. One-shot closure timers have none.
    package var leeway: Int64 { 0 }

    /// See ``RearmableTimer/rearm(after:)``: a wall-clock timer moves to the date `now + delay`.
    package final func rearm(after delay: Duration) -> Bool {
        guard !isPeriodic else { return false }
        // Optional chaining borrows the loop from the timer: no retain and release of it per call.
        return core?.rearm(self, after: delay) ?? false
    }

    /// See ``RearmableTimer/rearm(at:)``: a monotonic timer moves to the delay from now to `date`.
    package final func rearm(at date: Date) -> Bool {
        BadInput.checkDate(date, method: "LoopScheduler's RearmableTimer.rearm(at:)")
        guard let core, !isPeriodic else { return false }
        let target = Nanoseconds.sinceEpoch(date)
        guard !isWall else { return core.rearm(self, to: target) }
        let delay = max(0, Nanoseconds.subtracting(target, core.wallNow()))
        return core.rearm(self, to: Nanoseconds.adding(core.monotonicNow(), delay))
    }

    /// Fires a timer that has no closure (a handler timer): overridden by ``HandlerLoopTimer``.
    func fireHandler() {}

    /// The scheduler disposed the timer because it shut down (or refused it because it had): tell
    /// whoever waits on it. Nothing for closure timers.
    func cancelledByScheduler() {}
}

/// A one-shot timer that calls a handler value stored inline instead of a closure: no closure
/// context per timer, which is what `sleep` and `withTimeout` use.
// The handler follows LoopWork's state machine, like `action`.
package final class HandlerLoopTimer<Handler: SchedulerTimerHandler>: LoopTimer, @unchecked Sendable {
    @exclusivity(unchecked) var handler: Handler?
    let handlerLeeway: Int64

    init(core: LoopCore?, deadline: Int64, isWall: Bool, leeway: Int64, handler: Handler) {
        self.handler = handler
        self.handlerLeeway = leeway
        super.init(core: core, deadline: deadline, isWall: isWall, action: nil)
    }

    package override var leeway: Int64 { handlerLeeway }

    override func fireHandler() {
        handler.take()?.timerFired()
    }

    override func cancelledByScheduler() {
        handler.take()?.timerCancelledByScheduler()
    }

    override public func releaseAction() {
        handler = nil
    }
}

/// A periodic timer: ticks on the grid `origin + k·interval` (``PeriodicGrid``, the rule every
/// scheduler shares), skipping missed grid points and telling the next tick how many it skipped.
// Grid and tick fields are loop-confined; the closure follows LoopWork's state machine.
package final class PeriodicLoopTimer: LoopTimer, @unchecked Sendable {
    let tickLeeway: Int64
    // Loop-confined once published, reached through `ticks`; exclusive by that confinement.
    @exclusivity(unchecked) private var storedTicks: Ticks

    /// Where the timer stands on its grid.
    package struct Ticks {
        /// The grid; its origin moves to the monotonic clock at the first tick of a wall-clock timer.
        var grid: PeriodicGrid
        /// The index of the last tick that ran (0 before the first).
        var index: Int64 = 0
        /// Grid points skipped before the next tick, told to it.
        var missed = 0
    }

    /// Loop-confined once published, like the store fields: debug builds check the loop thread.
    var ticks: Ticks {
        _read {
            assertConfined()
            yield storedTicks
        }
        _modify {
            assertConfined()
            yield &storedTicks
        }
    }
    @exclusivity(unchecked) var tick: (@Sendable (_ missedTicks: Int) -> Void)?
    /// Told when the scheduler disposes the timer at shutdown (a handler's
    /// `timerCancelledByScheduler`), so an async tick sequence ends instead of waiting forever.
    @exclusivity(unchecked) var onCancelledByScheduler: (@Sendable () -> Void)?

    /// A timer whose first tick is due at `deadline` (monotonic, or wall-clock while `isWall`).
    init(
        core: LoopCore?,
        deadline: Int64,
        isWall: Bool,
        interval: Int64,
        leeway: Int64,
        tick: @escaping @Sendable (Int) -> Void
    ) {
        self.storedTicks = Ticks(grid: PeriodicGrid(origin: deadline, interval: interval))
        self.tickLeeway = leeway
        self.tick = tick
        super.init(core: core, deadline: deadline, isWall: isWall, isPeriodic: true, action: nil)
    }

    override public func releaseAction() {
        tick = nil
        onCancelledByScheduler = nil
    }

    package override var leeway: Int64 { tickLeeway }

    override func cancelledByScheduler() {
        onCancelledByScheduler.take()?()
    }
}
