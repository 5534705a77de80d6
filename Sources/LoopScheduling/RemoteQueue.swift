import Scheduling

/// One unit of work for the loop, in the order it was submitted: a task or a timer to insert, a
/// timer disposed off the loop (to free its slot now, not at its deadline), or an executor job.
///
/// The queues hold the job itself (a pointer), not a closure around it: enqueueing a job
/// allocates nothing of ours (DESIGN §8.1).
enum LoopItem {
    /// A task to run, or a timer (`isTimer`) to insert into the timer store.
    case work(LoopWork)
    /// A timer that was disposed on another thread.
    case cancelled(LoopTimer)
    /// A job of a task that prefers the scheduler, run with it as the task executor only: its
    /// nonisolated code then calls nonisolated functions without a hop.
    case taskJob(UnownedJob)
    /// A job of an actor pinned to the scheduler, run isolated to the actor executor.
    case actorJob(UnownedJob)
}

/// Work handed to the loop by other threads.
///
/// One lock, taken once per submission and once per batch on the loop, which swaps the array out
/// (NIO-style) and runs user code outside the lock. The loop is woken only when the queue goes
/// from empty to non-empty: `wakePending` stays set until the loop takes the batch. The wake-up
/// (`uv_async_send`) is sent under the lock, and the loop closes its async handle under the same
/// lock (``LoopLifecycle/beginClosing()``), so no sender can be inside `uv_async_send` on a
/// closing handle; that is what the old in-flight sender count did, without the count.
final class RemoteQueue: Sendable {
    private struct State {
        var items: [LoopItem] = []
        var wakePending = false
    }

    private let state = LockedValue(State())

    init() {}

    /// Appends `item` and wakes the loop if the queue was idle, if `accepts` (evaluated under the
    /// lock, so against the lifecycle's transitions, which happen under it too) allows it.
    ///
    /// - Returns: whether the item was queued.
    @inline(__always)
    func submit(_ item: LoopItem, if accepts: () -> Bool, wake: () -> Void) -> Bool {
        state.withLock { state in
            guard accepts() else { return false }
            state.items.append(item)
            if !state.wakePending {
                state.wakePending = true
                wake()
            }
            return true
        }
    }

    /// Runs `body` under the queue's lock: for the lifecycle transitions that must be ordered
    /// against submissions. `body` gets whether a wake-up is already pending and may send one.
    func withLock<Result>(_ body: (_ wakePending: inout Bool, _ isEmpty: Bool) -> Result) -> Result {
        state.withLock { state in body(&state.wakePending, state.items.isEmpty) }
    }

    /// Items waiting: for tests.
    var count: Int { state.withLock { $0.items.count } }

    /// Room the buffer has: for tests.
    var capacity: Int { state.withLock { $0.items.capacity } }

    /// Drops the buffer if it is empty and has room for more than `keep` items (the loop is quiet:
    /// see ``LoopCore/giveBackMemory()``). Returns the capacity it has now.
    func giveBackMemory(keepingUpTo keep: Int) -> Int {
        state.withLock { state in
            if state.items.isEmpty && state.items.capacity > keep { state.items = [] }
            return state.items.capacity
        }
    }

    /// Swaps everything queued into `batch` (which the caller emptied, keeping its capacity, so the
    /// two buffers alternate and steady-state submission does not allocate).
    @inline(__always)
    func take(into batch: inout [LoopItem]) {
        state.withLock { state in
            state.wakePending = false
            swap(&state.items, &batch)
        }
    }
}
