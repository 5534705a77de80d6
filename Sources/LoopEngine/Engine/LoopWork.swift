@_spi(SchedulerEngine) import Scheduling
import Synchronization

/// One scheduled task of a LoopScheduler: the queue entry and the returned disposable in one
/// object (a ``ScheduledAction``, which owns the closure), so one allocation besides the closure's
/// context (40 bytes: a 48-byte allocator chunk). A task does not point at its loop: disposing one
/// needs no loop (the loop skips it when it gets there), which spares every task a retain and a
/// release of the engine.
///
/// Thread rules: `state` is atomic; `action` belongs to whoever wins a transition out of
/// `pending` (see `ActionLifecycle`); everything else is written before the entry is published and
/// read-only afterwards, except a timer's store fields, which are loop-confined.
// Safe as described above: the atomic state machine decides every cross-thread access.
package class LoopWork: ScheduledAction, @unchecked Sendable {
    // The flags live here, in the padding after `ScheduledAction.state`, not in the subclasses:
    // a timer's own fields would start past them and grow it to the next allocator size class.
    /// A periodic timer (`PeriodicLoopTimer`).
    final let isPeriodic: Bool
    /// A timer whose deadline is on the wall clock (an `at:` timer before its first fire); set to
    /// false on the loop thread only (``LoopTimer/leaveWallClock()``).
    final var isWall: Bool
    /// A timer's slot in the timer store (see ``LoopTimer/heapIndex``), or -1; here rather than in
    /// `LoopTimer` so it fills padding instead of growing the timer. Loop-confined.
    @exclusivity(unchecked) final var slot: Int32 = -1

    init(
        action: (@Sendable () -> Void)?,
        isPeriodic: Bool = false,
        isWall: Bool = false
    ) {
        self.isPeriodic = isPeriodic
        self.isWall = isWall
        super.init(action: action)
    }
}
