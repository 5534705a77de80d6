import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Rule 13's protocol (re-arm in place), the one implementation: the transitions a re-armable
/// timer's owner thread (the loop that files and fires it) and other threads (re-arming it) make,
/// and what each outcome obliges the caller to do. Docs/Design.md §4.13 ("Re-arm in place") says
/// why each is safe; every engine that files re-armable timers calls these and nothing else.
///
/// ```
///             ┌──beginClaim (owner)──▶ claiming ──commitClaim──▶ finished
///             │                           └──────abortClaim─────▶ pending
///  pending ───┤
///             └──beginRearm (other)──▶ rearming ──endRearm──▶ pending
///                                         │  owner: beginClaim / beginOwnerRearm
///                                         ▼
///                                  rearmingRefile ──endRearm──▶ pending, and the timer queued
///                                                               to the owner to be filed again
///  dispose (any thread, never waits): pending, claiming, rearming, rearmingRefile ──▶ disposed
/// ```
///
/// The owner thread never waits for another thread: a timer that another thread is re-arming is
/// left to that re-arm (`rearmingRefile`), which hands it back through the owner's queue when it
/// ends. Only another thread's ``beginRearm(_:)`` waits, for a claim or a re-arm in progress, each
/// a few instructions long.
extension ActionLifecycle {
    /// What the owner thread may do with a popped one-shot timer.
    package enum Claim {
        /// It holds the timer (`claiming`): it reads the deadline once more, then either
        /// ``commitClaim(_:)``s and runs it, or ``abortClaim(_:)``s and files it again.
        case claimed
        /// Another thread is writing its deadline: the owner files it where it cannot come due
        /// (keeping its sequence) and leaves it to that re-arm, which queues it to be filed again.
        case leftToRearm
        /// Disposed (or done): it never runs.
        case notPending
    }

    /// The owner thread claims a timer it popped as due. Never waits.
    @inline(__always)
    package static func beginClaim(_ state: borrowing Atomic<UInt8>) -> Claim {
        var current = pending
        while true {
            let (exchanged, original) = state.compareExchange(
                expected: current,
                desired: current == pending ? claiming : rearmingRefile,
                ordering: .acquiringAndReleasing
            )
            if exchanged { return current == pending ? .claimed : .leftToRearm }
            switch original {
            case pending, rearming: current = original
            case rearmingRefile: return .leftToRearm
            default: return .notPending
            }
        }
    }

    /// `claiming → finished`: the caller owns the closure and runs it once. False if the timer was
    /// disposed during the claim: it never runs (the disposer released the closure).
    @inline(__always)
    package static func commitClaim(_ state: borrowing Atomic<UInt8>) -> Bool {
        state.compareExchange(expected: claiming, desired: finished, ordering: .acquiringAndReleasing).exchanged
    }

    /// `claiming → pending`: not due after all; the caller files it again. False if the timer was
    /// disposed during the claim: the caller drops it.
    @inline(__always)
    package static func abortClaim(_ state: borrowing Atomic<UInt8>) -> Bool {
        state.compareExchange(expected: claiming, desired: pending, ordering: .acquiringAndReleasing).exchanged
    }

    /// What a re-arm on the owner thread may do.
    package enum OwnerRearm {
        /// The timer is pending and no other thread is re-arming it: the owner moves it in its
        /// store (only the owner files and fires it, so no transient state is needed).
        case move
        /// Another thread is re-arming it: this re-arm is ordered before that one, whose deadline
        /// is the last word; that re-arm queues the timer to be filed again when it ends. Accepted.
        case leftToRearm
        /// Disposed, running or done: refused, nothing changes.
        case refused
    }

    /// The owner thread re-arms a timer. Never waits; on a plain pending timer, one relaxed load.
    @inline(__always)
    package static func beginOwnerRearm(_ state: borrowing Atomic<UInt8>) -> OwnerRearm {
        var current = state.load(ordering: .relaxed)
        while true {
            switch current {
            case pending: return .move
            case rearmingRefile: return .leftToRearm
            case rearming:
                let (exchanged, original) = state.compareExchange(
                    expected: rearming,
                    desired: rearmingRefile,
                    ordering: .acquiringAndReleasing
                )
                if exchanged { return .leftToRearm }
                current = original
            default: return .refused
            }
        }
    }

    /// `pending → rearming`, on a thread other than the owner's: the caller may write the timer's
    /// deadline, then must call ``endRearm(_:)``. Waits out a claim or another thread's re-arm in
    /// progress. False if the timer is not pending (disposed, running or done).
    @inline(__always)
    package static func beginRearm(_ state: borrowing Atomic<UInt8>) -> Bool {
        while true {
            let (exchanged, original) = state.compareExchange(
                expected: pending,
                desired: rearming,
                ordering: .acquiringAndReleasing
            )
            if exchanged { return true }
            guard isTransient(original), waitWhileTransient(state) == pending else { return false }
        }
    }

    /// How a re-arm from another thread ended.
    package enum RearmEnd {
        /// The new deadline is published (`rearming → pending`): the re-arm is accepted. An
        /// earlier deadline must still be queued to the owner, which files the timer again.
        case published
        /// Published, and the owner left the timer to this re-arm (`rearmingRefile → pending`):
        /// accepted, and the caller must queue the timer to the owner to be filed again, whatever
        /// its deadline.
        case refileRequested
        /// Disposed meanwhile: the re-arm is refused (it is ordered after the dispose), and the
        /// deadline it wrote is never read.
        case disposed
    }

    /// Ends a re-arm begun with ``beginRearm(_:)``.
    @inline(__always)
    package static func endRearm(_ state: borrowing Atomic<UInt8>) -> RearmEnd {
        let (exchanged, original) = state.compareExchange(
            expected: rearming,
            desired: pending,
            ordering: .acquiringAndReleasing
        )
        if exchanged { return .published }
        // Only a dispose (to `disposed`) or the owner (to `rearmingRefile`) moves it meanwhile, and
        // only a dispose moves it out of `rearmingRefile`.
        guard original == rearmingRefile,
            state.compareExchange(expected: rearmingRefile, desired: pending, ordering: .acquiringAndReleasing)
                .exchanged
        else { return .disposed }
        return .refileRequested
    }

    @inline(__always)
    static func isTransient(_ state: UInt8) -> Bool {
        state == claiming || state == rearming || state == rearmingRefile
    }

    /// Waits until no claim or re-arm holds the state and returns it; yields the thread if it takes
    /// long (the holder was preempted). Only a re-arm from a thread other than the owner's waits.
    @inline(never)
    static func waitWhileTransient(_ state: borrowing Atomic<UInt8>) -> UInt8 {
        var spins = 0
        while true {
            let current = state.load(ordering: .acquiring)
            if !isTransient(current) { return current }
            spins += 1
            if spins > 64 { sched_yield() }
        }
    }
}
