import Synchronization

/// A scheduled task that is also its own disposable: the one object the Dispatch-backed schedulers
/// allocate per task besides the closure's context (their timers are ``QueueTimer``s).
///
/// Dispatch holds only this entry; disposing releases the closure at once, so a disposed task
/// keeps a few dozen bytes alive until Dispatch gets to it instead of everything it captured.
package final class ScheduledAction: DisposeOutcomeReporting {
    private let state = Atomic<UInt8>(ActionLifecycle.pending)
    // Guarded by `state`: only the winner of a transition out of `pending` touches it (see
    // ActionLifecycle).
    nonisolated(unsafe) private var action: (@Sendable () -> Void)?

    package init(_ action: @escaping @Sendable () -> Void) {
        self.action = action
    }

    package var isDisposed: Bool { ActionLifecycle.isDisposed(state) }

    package func dispose() {
        _ = disposeReportingPending()
    }

    package func disposeReportingPending() -> Bool {
        guard ActionLifecycle.dispose(state) == .wasPending else { return false }
        action = nil
        return true
    }

    /// Runs the action once as `scheduler`'s action, unless it was disposed first.
    package func runOnce(as scheduler: any Scheduler) {
        guard ActionLifecycle.claimRun(state) else { return }
        let action = self.action.take()
        if let action { CurrentScheduler.withCurrent(scheduler, action) }
    }
}
