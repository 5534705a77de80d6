import Synchronization

/// The lock-free state machine of one scheduled action, shared by every scheduler's entry type
/// (the Dispatch schedulers' ``ScheduledAction`` and ``QueueTimer``, and the loop engine's
/// timer entries).
///
/// ```
///  pending ──claimRun──▶ finished ──dispose──▶ disposed
///     │  ▲                                          ▲
///     │  └──endTick── running ──dispose──▶ disposedWhileRunning ──endTick──┘
///     ├──claimTick──────▲
///     └──dispose──────────────────────────────────▶ disposed
/// ```
///
/// Whoever wins a transition out of `pending` owns the entry's closure exclusively: the runner
/// reads it, or the disposer releases it, never both. That is what lets `dispose()` release the
/// closure at once without a lock, and what guarantees that an action disposed before it started
/// never starts. `dispose` never waits: it wins from every state in which the action has not
/// started.
///
/// A re-armable timer of the loop engine adds three short-lived states on the way out of
/// `pending` (`claiming`, `rearming`, `rearmingRefile`): rule 13's protocol, in
/// `ActionLifecycle+Rearm.swift` and Docs/Design.md §4.13 ("Re-arm in place").
package enum ActionLifecycle {
    package static let pending: UInt8 = 0
    package static let running: UInt8 = 1
    package static let finished: UInt8 = 2
    package static let disposed: UInt8 = 3
    package static let disposedWhileRunning: UInt8 = 4
    /// The owner thread is deciding whether a popped re-armable timer is due (re-arm protocol).
    package static let claiming: UInt8 = 5
    /// Another thread is writing a re-armable timer's deadline (re-arm protocol).
    package static let rearming: UInt8 = 6
    /// As `rearming`, and the owner thread left the timer to that re-arm, which must queue it to be
    /// filed again when it ends (re-arm protocol).
    package static let rearmingRefile: UInt8 = 7

    /// What `dispose` found.
    package enum DisposeOutcome {
        /// It was waiting to run: the caller now owns the closure and must release it.
        case wasPending
        /// A periodic tick is running: the runner releases the closure when the tick returns.
        case wasRunning
        /// It had already run (or was already disposed): nothing to release.
        case nothingToDo
    }

    /// `pending → finished`: the caller may take the closure and run it once.
    @inline(__always)
    package static func claimRun(_ state: borrowing Atomic<UInt8>) -> Bool {
        state.compareExchange(expected: pending, desired: finished, ordering: .acquiringAndReleasing).exchanged
    }

    /// `pending → running`: the caller may run one periodic tick, then must call `endTick`.
    @inline(__always)
    package static func claimTick(_ state: borrowing Atomic<UInt8>) -> Bool {
        state.compareExchange(expected: pending, desired: running, ordering: .acquiringAndReleasing).exchanged
    }

    /// `running → pending`, or `disposedWhileRunning → disposed`.
    ///
    /// - Returns: true if the timer is still active; false if it was disposed during the tick, in
    ///   which case the caller must release the closure.
    @inline(__always)
    package static func endTick(_ state: borrowing Atomic<UInt8>) -> Bool {
        if state.compareExchange(expected: running, desired: pending, ordering: .acquiringAndReleasing).exchanged {
            return true
        }
        state.store(disposed, ordering: .releasing)
        return false
    }

    /// Marks the action disposed, whatever its state, without waiting for anyone. A re-armable
    /// timer in one of the re-arm protocol's transient states has not started: disposing it wins
    /// (`wasPending`), and the claim or re-arm that held it sees `disposed` when it ends.
    package static func dispose(_ state: borrowing Atomic<UInt8>) -> DisposeOutcome {
        var current = state.load(ordering: .acquiring)
        while true {
            let next: UInt8
            let outcome: DisposeOutcome
            switch current {
            case pending, claiming, rearming, rearmingRefile: (next, outcome) = (disposed, .wasPending)
            case running: (next, outcome) = (disposedWhileRunning, .wasRunning)
            case finished: (next, outcome) = (disposed, .nothingToDo)
            default: return .nothingToDo
            }
            let (exchanged, original) = state.compareExchange(
                expected: current,
                desired: next,
                ordering: .acquiringAndReleasing
            )
            if exchanged { return outcome }
            current = original
        }
    }

    /// Whether `dispose` has been called.
    @inline(__always)
    package static func isDisposed(_ state: borrowing Atomic<UInt8>) -> Bool {
        let current = state.load(ordering: .acquiring)
        return current == disposed || current == disposedWhileRunning
    }
}
