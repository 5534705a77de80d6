import Scheduling
import Synchronization

/// One scheduled task of a LoopScheduler: the queue entry and the returned disposable in one
/// object, so one allocation besides the closure's context (40 bytes: a 48-byte allocator chunk).
/// A task does not point at its loop: disposing one needs no loop (the loop skips it when it gets
/// there), which spares every task a retain and a release of the engine.
///
/// Thread rules: `state` is atomic; `action` belongs to whoever wins a transition out of
/// `pending` (see `ActionLifecycle`); everything else is written before the entry is published and
/// read-only afterwards, except a timer's heap fields, which are loop-confined.
// Safe as described above: the atomic state machine decides every cross-thread access.
class LoopWork: Disposable, @unchecked Sendable {
    // Guarded by `state` (one owner at a time), so the runtime exclusivity check is redundant.
    @exclusivity(unchecked) final var action: (@Sendable () -> Void)?
    let state = Atomic<UInt8>(ActionLifecycle.pending)
    // The flags live here, in the padding after `state`, not in the subclasses: Swift does not
    // pack a subclass's fields into its superclass's padding, and a timer would grow to the next
    // allocator size class.
    /// Set by the timer subclasses, so the hot paths test a byte instead of casting.
    final let isTimer: Bool
    /// A periodic timer (`PeriodicLoopTimer`).
    final let isPeriodic: Bool
    /// A timer whose deadline is on the wall clock (an `at:` timer before its first fire).
    final var isWall: Bool
    /// A timer's slot in the timer store's heap, or -1; here rather than in `LoopTimer` so it
    /// fills padding instead of growing the timer to the next allocator size class. Loop-confined.
    @exclusivity(unchecked) final var slot: Int32 = -1

    init(
        action: (@Sendable () -> Void)?,
        isTimer: Bool = false,
        isPeriodic: Bool = false,
        isWall: Bool = false
    ) {
        self.action = action
        self.isTimer = isTimer
        self.isPeriodic = isPeriodic
        self.isWall = isWall
    }

    final var isDisposed: Bool { ActionLifecycle.isDisposed(state) }

    final func dispose() {
        if ActionLifecycle.dispose(state) == .wasPending {
            releaseAction()
            if isTimer {
                let timer = unsafeDowncast(self, to: LoopTimer.self)
                timer.core?.timerDisposed(timer)
            }
        }
    }

    /// Drops the closure(s). Called by whoever owns them under the state machine.
    func releaseAction() {
        action = nil
    }
}

/// A one-shot timer: a task with a deadline, 56 bytes — one 64-byte allocator chunk. Its
/// sequence number lives only in the heap's node, its slot in `LoopWork`'s padding.
class LoopTimer: LoopWork, HeapSlotEntry, @unchecked Sendable {
    /// The engine to tell when the timer is disposed, so its slot is freed at once rather than at
    /// its deadline; nil only for entries made by the timer store's unit tests, which have no loop.
    final let core: LoopCore?
    // Loop-confined once published. Final, so the heap reaches it without the vtable.
    /// Monotonic nanoseconds, or wall-clock nanoseconds since 1970 while `isWall`.
    @exclusivity(unchecked) final var deadline: Int64

    final var heapIndex: Int {
        @inline(__always) get { Int(slot) }
        @inline(__always) set { slot = Int32(truncatingIfNeeded: newValue) }
    }

    init(core: LoopCore?, deadline: Int64, isWall: Bool, isPeriodic: Bool = false, action: (@Sendable () -> Void)?) {
        self.core = core
        self.deadline = deadline
        super.init(action: action, isTimer: true, isPeriodic: isPeriodic, isWall: isWall)
    }

    /// How late a tick may start, for coalescing wake-ups. One-shot timers have none.
    var leeway: Int64 { 0 }
}

/// A periodic timer: ticks on the grid `origin + k·interval` (``PeriodicGrid``, the rule every
/// scheduler shares), skipping missed grid points and telling the next tick how many it skipped.
final class PeriodicLoopTimer: LoopTimer, @unchecked Sendable {
    let tickLeeway: Int64
    // Loop-confined once published, like the heap fields.
    /// The grid; its origin moves to the monotonic clock at the first tick of a wall-clock timer.
    @exclusivity(unchecked) var grid: PeriodicGrid
    /// The index of the last tick that ran (0 before the first).
    @exclusivity(unchecked) var tickIndex: Int64 = 0
    @exclusivity(unchecked) var missedTicks = 0
    @exclusivity(unchecked) var tick: (@Sendable (_ missedTicks: Int) -> Void)?

    /// A timer whose first tick is due at `deadline` (monotonic, or wall-clock while `isWall`).
    init(
        core: LoopCore?,
        deadline: Int64,
        isWall: Bool,
        interval: Int64,
        leeway: Int64,
        tick: @escaping @Sendable (Int) -> Void
    ) {
        self.grid = PeriodicGrid(origin: deadline, interval: interval)
        self.tickLeeway = leeway
        self.tick = tick
        super.init(core: core, deadline: deadline, isWall: isWall, isPeriodic: true, action: nil)
    }

    override func releaseAction() {
        tick = nil
    }

    override var leeway: Int64 { tickLeeway }
}
