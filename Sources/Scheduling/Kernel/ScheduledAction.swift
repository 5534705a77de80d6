import Synchronization

/// A scheduled action that is also its own disposable: the one closure-owning entry of every
/// scheduler. The Dispatch-backed schedulers allocate it per task (their timers subclass it as
/// ``QueueTimer``), and the loop engine's task and timer entries subclass it too.
///
/// The closure is owned through the ``ActionLifecycle`` state machine: whoever wins the transition
/// out of `pending` (the runner or the disposer) owns it, so disposing releases it at once without
/// a lock, and an action disposed before it started never starts. A scheduler holds only this
/// entry, so a disposed task keeps a few dozen bytes alive until the scheduler gets to it instead
/// of everything its closure captured.
///
/// Layout: `action` then `state` (33 bytes with the header), so a subclass's first small fields
/// fill the padding after `state` (the loop engine keeps its flags and heap slot there: a task is
/// 40 bytes, one 48-byte allocator chunk).
///
/// Not API: an engine hook behind `@_spi(SchedulerEngine)`, `open` only because the loop engine's
/// entries subclass it from another module (a `package` class cannot be subclassed there).
@_spi(SchedulerEngine)
// Safe as described above: the atomic state machine decides every cross-thread access to `action`;
// subclasses state their own rules.
open class ScheduledAction: DisposeOutcomeReporting, @unchecked Sendable {
    /// The closure, owned by whoever wins a transition out of `pending`. Subclasses with other
    /// closures (a periodic tick, a handler) leave it nil and override ``releaseAction()``.
    // Guarded by `state` (one owner at a time), so the runtime exclusivity check is redundant.
    @exclusivity(unchecked) public final var action: (@Sendable () -> Void)?
    /// See ``ActionLifecycle``.
    public final let state = Atomic<UInt8>(ActionLifecycle.pending)

    /// An entry in the `pending` state, owning `action` (nil for subclasses that own other closures).
    public init(action: (@Sendable () -> Void)?) {
        self.action = action
    }

    /// Whether the entry was disposed (see ``ActionLifecycle``).
    public final var isDisposed: Bool { ActionLifecycle.isDisposed(state) }

    /// Gives a recycled entry its next closure: only its owner calls it, before the entry is
    /// published again. Here, not by assigning ``action`` from the subclass's module: there the
    /// exclusivity attribute does not apply, and each reuse paid a runtime access check.
    @inlinable public final func reuse(action: __owned @escaping @Sendable () -> Void) {
        self.action = action
    }

    /// Disposes; see ``disposeReportingPending()``.
    public final func dispose() {
        _ = disposeReportingPending()
    }

    /// Disposes; if the action was still pending, releases its closure(s) at once and tells the
    /// subclass (``didDispose()``). A periodic tick disposed while it runs is released by the
    /// runner when the tick returns (``runTick(as:)``).
    public final func disposeReportingPending() -> Bool {
        guard ActionLifecycle.dispose(state) == .wasPending else { return false }
        releaseAction()
        didDispose()
        return true
    }

    /// Drops the closure(s). Called by whoever owns them under the state machine.
    open func releaseAction() {
        action = nil
    }

    /// Called once, after a dispose that won over the runner released the closure: the entry can
    /// leave its scheduler's queue or heap now rather than at its turn. Nothing by default.
    open func didDispose() {}

    /// Runs the action once as `scheduler`'s action, unless it was disposed first.
    public final func runOnce(as scheduler: any Scheduler) {
        guard ActionLifecycle.claimRun(state) else { return }
        let action = self.action.take()
        if let action { CurrentScheduler.withCurrent(scheduler, action) }
    }

    /// Runs one periodic tick of ``action`` as `scheduler`'s action, unless the entry was disposed
    /// first. (The loop engine's periodic timers tick a closure of their own and follow the same
    /// transitions in `TimerDriver`.)
    ///
    /// - Returns: whether the entry is still active after the tick (a dispose during the tick
    ///   released the closure here).
    public final func runTick(as scheduler: any Scheduler) -> Bool {
        guard ActionLifecycle.claimTick(state) else { return false }
        if let action { CurrentScheduler.withCurrent(scheduler, action) }
        guard ActionLifecycle.endTick(state) else {
            releaseAction()
            return false
        }
        return true
    }
}
