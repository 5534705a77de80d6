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
class LoopWork: DisposeOutcomeReporting, @unchecked Sendable {
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
        _ = disposeReportingPending()
    }

    final func disposeReportingPending() -> Bool {
        guard ActionLifecycle.dispose(state) == .wasPending else { return false }
        releaseAction()
        if isTimer {
            let timer = unsafeDowncast(self, to: LoopTimer.self)
            timer.core?.timerDisposed(timer)
        }
        return true
    }

    /// Drops the closure(s). Called by whoever owns them under the state machine.
    func releaseAction() {
        action = nil
    }
}
