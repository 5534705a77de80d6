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
/// never starts.
package enum ActionLifecycle {
    package static let pending: UInt8 = 0
    package static let running: UInt8 = 1
    package static let finished: UInt8 = 2
    package static let disposed: UInt8 = 3
    package static let disposedWhileRunning: UInt8 = 4

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

    /// Marks the action disposed, whatever its state.
    package static func dispose(_ state: borrowing Atomic<UInt8>) -> DisposeOutcome {
        var current = state.load(ordering: .acquiring)
        while true {
            let next: UInt8
            switch current {
            case pending: next = disposed
            case running: next = disposedWhileRunning
            case finished: next = disposed
            default: return .nothingToDo
            }
            let (exchanged, original) = state.compareExchange(
                expected: current,
                desired: next,
                ordering: .acquiringAndReleasing
            )
            if exchanged {
                switch current {
                case pending: return .wasPending
                case running: return .wasRunning
                default: return .nothingToDo
                }
            }
            current = original
        }
    }

    /// Whether `dispose` has been called.
    @inline(__always)
    package static func isDisposed(_ state: borrowing Atomic<UInt8>) -> Bool {
        state.load(ordering: .acquiring) >= disposed
    }
}
