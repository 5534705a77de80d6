import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

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
///
/// A re-armable timer of the loop engine, whose deadline another thread may move while the loop
/// fires it, passes through two short-lived states: `claiming` (the loop holds it while it reads
/// the deadline once more, then runs it or files it again) and `rearming` (a re-arm holds it while
/// it writes the new deadline). Each lasts a few instructions; whoever finds one waits for it to
/// end (``waitWhileTransient(_:)``).
///
/// ```
///  pending ──beginClaim──▶ claiming ──commitClaim──▶ finished
///     ▲                        └──abortClaim──▶ pending
///     └──endRearm── rearming ◀──beginRearm── pending
/// ```
package enum ActionLifecycle {
    package static let pending: UInt8 = 0
    package static let running: UInt8 = 1
    package static let finished: UInt8 = 2
    package static let disposed: UInt8 = 3
    package static let disposedWhileRunning: UInt8 = 4
    package static let claiming: UInt8 = 5
    package static let rearming: UInt8 = 6

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
            case claiming, rearming:
                current = waitWhileTransient(state)
                continue
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
        let current = state.load(ordering: .acquiring)
        return current == disposed || current == disposedWhileRunning
    }

    // MARK: Re-armable timers

    /// `pending → claiming`, on the loop thread that fires the timer: it then reads the deadline
    /// again and either ``commitClaim(_:)``s (due: it runs) or ``abortClaim(_:)``s (a re-arm moved
    /// it later: it is filed again). False if the timer is not pending (disposed).
    @inline(__always)
    package static func beginClaim(_ state: borrowing Atomic<UInt8>) -> Bool {
        enterTransient(state, claiming)
    }

    /// `claiming → finished`: the caller owns the closure and runs it once.
    @inline(__always)
    package static func commitClaim(_ state: borrowing Atomic<UInt8>) {
        state.store(finished, ordering: .releasing)
    }

    /// `claiming → pending`: not due after all; the timer waits again.
    @inline(__always)
    package static func abortClaim(_ state: borrowing Atomic<UInt8>) {
        state.store(pending, ordering: .releasing)
    }

    /// `pending → rearming`, from any thread: the caller may write the timer's deadline, then must
    /// call ``endRearm(_:)``. False if the timer is not pending (disposed, running or done).
    @inline(__always)
    package static func beginRearm(_ state: borrowing Atomic<UInt8>) -> Bool {
        enterTransient(state, rearming)
    }

    /// `rearming → pending`: the new deadline is published.
    @inline(__always)
    package static func endRearm(_ state: borrowing Atomic<UInt8>) {
        state.store(pending, ordering: .releasing)
    }

    /// `pending → transient` (`claiming` or `rearming`), waiting out another thread's transient
    /// state first; false once the state is anything else (disposed, running, done).
    @inline(__always)
    static func enterTransient(_ state: borrowing Atomic<UInt8>, _ transient: UInt8) -> Bool {
        while true {
            let (exchanged, original) = state.compareExchange(
                expected: pending,
                desired: transient,
                ordering: .acquiringAndReleasing
            )
            if exchanged { return true }
            guard original == claiming || original == rearming, waitWhileTransient(state) == pending else {
                return false
            }
        }
    }

    /// Waits until the state is neither `claiming` nor `rearming` (held for a few instructions by
    /// a thread that does not block) and returns it; yields the thread if it takes long (the
    /// holder was preempted).
    @inline(never)
    package static func waitWhileTransient(_ state: borrowing Atomic<UInt8>) -> UInt8 {
        var spins = 0
        while true {
            let current = state.load(ordering: .acquiring)
            if current != claiming && current != rearming { return current }
            spins += 1
            if spins > 64 { sched_yield() }
        }
    }
}
