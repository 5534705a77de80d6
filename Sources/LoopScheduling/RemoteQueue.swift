import Scheduling
import Synchronization

/// The lifecycle of a LoopScheduler, as the threads that submit work see it.
enum LoopLifecycle {
    /// Accepting work.
    case open
    /// `shutdown()` was called: new work is refused; the loop is finishing accepted work.
    case shuttingDown
    /// Every handle is closed (or closing); nothing will run again.
    case closed
}

/// Work handed to the loop by other threads: entries to run or insert, and timers disposed off
/// the loop that the loop should free now rather than at their deadline.
///
/// One lock, taken once per submission and once per batch on the loop (which swaps the arrays
/// out, NIO-style, and runs user code outside the lock). The loop is woken only when the queue
/// goes from empty to non-empty: `wakePending` stays set until the loop takes the batch.
final class RemoteQueue: Sendable {
    struct Batch {
        var submitted: [LoopWork] = []
        var cancelled: [LoopTimer] = []
    }

    private struct State {
        var lifecycle = LoopLifecycle.open
        var batch = Batch()
        var wakePending = false
    }

    private let state = LockedValue(State())
    /// Threads between deciding to call `uv_async_send` and returning from it; the loop waits for
    /// zero before closing the async handle.
    let sendsInFlight = Atomic<Int>(0)

    enum Outcome {
        case refused
        case accepted
        /// Accepted, and the caller must wake the loop, then call `wakeDone()`.
        case acceptedWake
    }

    /// Queues `entry` to run or be inserted on the loop, unless shutdown began.
    func submit(_ entry: LoopWork) -> Outcome {
        state.withLock { state in
            guard case .open = state.lifecycle else { return .refused }
            state.batch.submitted.append(entry)
            return claimWake(&state)
        }
    }

    /// Tells the loop that a timer was disposed off the loop, so it frees the slot now.
    func cancel(_ entry: LoopTimer) -> Outcome {
        state.withLock { state in
            guard case .open = state.lifecycle else { return .refused }
            state.batch.cancelled.append(entry)
            return claimWake(&state)
        }
    }

    /// Moves to `shuttingDown` if open. Returns whether this call did it and whether to wake.
    func beginShutdown() -> (began: Bool, outcome: Outcome) {
        state.withLock { state in
            guard case .open = state.lifecycle else { return (false, .refused) }
            state.lifecycle = .shuttingDown
            return (true, claimWake(&state))
        }
    }

    /// Decides under the lock whether this submission wakes the loop, and if so counts the caller
    /// as a sender in flight before the lock is released, so the loop cannot close the async
    /// handle between this decision and the `uv_async_send`.
    private func claimWake(_ state: inout State) -> Outcome {
        if state.wakePending { return .accepted }
        state.wakePending = true
        sendsInFlight.add(1, ordering: .acquiringAndReleasing)
        return .acceptedWake
    }

    func wakeDone() {
        sendsInFlight.subtract(1, ordering: .acquiringAndReleasing)
    }

    /// Swaps everything queued into `batch` (which the caller emptied, keeping its capacity, so the
    /// two buffers alternate and steady-state submission does not allocate).
    func take(into batch: inout Batch) -> LoopLifecycle {
        state.withLock { state in
            state.wakePending = false
            swap(&state.batch, &batch)
            return state.lifecycle
        }
    }

    func markClosed() {
        state.withLock { $0.lifecycle = .closed }
    }
}
