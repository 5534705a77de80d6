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
/// (NIO-style) and runs user code outside the lock. The wake-up (`uv_async_send`) is sent under
/// the lock, and the loop closes its async handle under the same lock
/// (``LoopLifecycle/beginClosing()``), so no sender can be inside `uv_async_send` on a closing
/// handle; that is what the old in-flight sender count did, without the count.
///
/// **Which submissions wake the loop.** Tasks and jobs wake it when the queue has no wake-up
/// pending (`wakePending` stays set until the loop takes the batch). Timers and cancellations
/// often need none, which matters because a `withTimeout` or a cancelled `sleep` from the
/// global pool is one of each, and a wake-up per item made the loop a third busy thread. The loop
/// publishes here, under this lock, what it has promised itself (``LoopPromise``):
///
/// - while it is **awake** (from taking the queue until it next prepares to block), it takes the
///   queue again before blocking: no timer or cancellation needs a wake-up;
/// - while it is **armed** for a monotonic deadline `A` (published only when the queue held
///   nothing unfiled, after the driver was armed), its next wake-up comes by `A` and begins by
///   taking the queue, before any timer fires or the driver is re-armed: a monotonic timer due at
///   or after `A` needs no wake-up, and neither does a cancellation unless the timer may be the
///   earliest one in the store (so `timersPending` never keeps a cancelled timer as the next thing
///   the loop waits for).
///
/// The promise only moves later after the loop took the queue (a fired driver or a stepped wall
/// clock, both of which take it before anything else), so an item left without a wake-up is
/// always filed before it could be late. The ``deferredLimit``-th item in a row left without a
/// wake-up wakes the loop: that bounds what cancelled timers hold (56 bytes each, their closures
/// are released already) and the work the loop finds queued.
final class RemoteQueue: Sendable {
    /// What the loop promised about its next look at the queue.
    struct LoopPromise {
        /// `awake`, or the monotonic deadline the driver is armed for (`Int64.max`: none).
        var armedDeadline: Int64
        /// A cancelled one-shot monotonic timer due at or before this may be the earliest in the
        /// store: its cancellation wakes the loop. `Int64.min` when the monotonic heap is empty.
        var earliestPending: Int64

        /// The loop takes the queue again before it blocks.
        static let awake = LoopPromise(armedDeadline: .min, earliestPending: .min)
        /// Nothing armed and nothing filed: the loop may be blocked for good. Not `awake` before
        /// the first promise: the loop's first prepare may come while it is still starting, when
        /// it promises nothing and blocks.
        static let idle = LoopPromise(armedDeadline: .max, earliestPending: .min)
        var isAwake: Bool { armedDeadline == .min }
    }

    /// The loop is woken by the item that makes this many queued without a wake-up.
    static let deferredLimit = 1024

    private struct State {
        var items: [LoopItem] = []
        var wakePending = false
        var promise = LoopPromise.idle
        /// Items queued without a wake-up since the loop last took the queue.
        var deferred = 0
    }

    private let state = LockedValue(State())

    init() {}

    /// Appends `item` and wakes the loop if it needs to (see the type's notes), if `accepts`
    /// (evaluated under the lock, so against the lifecycle's transitions, which happen under it
    /// too) allows it.
    ///
    /// - Returns: whether the item was queued.
    @inline(__always)
    func submit(_ item: LoopItem, if accepts: () -> Bool, wake: () -> Void) -> Bool {
        state.withLock { state in
            guard accepts() else { return false }
            state.items.append(item)
            if !state.wakePending {
                if state.deferred < Self.deferredLimit - 1 && Self.needsNoWake(item, state.promise) {
                    state.deferred += 1
                } else {
                    state.wakePending = true
                    wake()
                }
            }
            return true
        }
    }

    /// Whether the loop's promise already covers `item`.
    @inline(__always)
    private static func needsNoWake(_ item: LoopItem, _ promise: LoopPromise) -> Bool {
        switch item {
        case .work(let entry):
            guard entry.isTimer else { return false }
            if promise.isAwake { return true }
            // Wall deadlines are armed through a conversion re-done at every wake-up: keep waking.
            guard !entry.isWall else { return false }
            // The submitter still owns the entry: its deadline is settled.
            return unsafeDowncast(entry, to: LoopTimer.self).deadline >= promise.armedDeadline
        case .cancelled(let timer):
            if promise.isAwake { return true }
            // A periodic timer's deadline and clock change on the loop as it ticks: not readable
            // here. A one-shot timer's are fixed once it was submitted.
            guard !timer.isPeriodic, !timer.isWall else { return false }
            return timer.deadline > promise.earliestPending
        case .taskJob, .actorJob:
            return false
        }
    }

    /// Runs `body` under the queue's lock: for the lifecycle transitions that must be ordered
    /// against submissions. `body` gets whether a wake-up is already pending and may send one.
    func withLock<Result>(_ body: (_ wakePending: inout Bool, _ isEmpty: Bool) -> Result) -> Result {
        state.withLock { state in body(&state.wakePending, state.items.isEmpty) }
    }

    /// Items waiting: for tests.
    var count: Int { state.withLock { $0.items.count } }

    /// Swaps everything queued into `batch` (which the caller emptied, keeping its capacity, so the
    /// two buffers alternate and steady-state submission does not allocate). The loop is awake
    /// until it publishes a promise again.
    @inline(__always)
    func take(into batch: inout [LoopItem]) {
        state.withLock { state in
            state.wakePending = false
            state.promise = .awake
            state.deferred = 0
            swap(&state.items, &batch)
        }
    }

    /// Takes the queue when it holds only items that were left without a wake-up (timers and
    /// cancellations: no user code), for the loop to file outside a batch. Returns whether it did.
    ///
    /// The promise stands. Filing leaves the driver armed as it was; under an armed promise it
    /// adds only timers due no earlier than that, and a timer that becomes the earliest is due
    /// before the published earliest, so cancelling it still wakes the loop. Claiming `awake` here
    /// could be wrong: this may run after the loop's last look before it blocks (a host's prepare
    /// callback after the scheduler's).
    func takeDeferred(into batch: inout [LoopItem]) -> Bool {
        state.withLock { state in
            guard !state.wakePending, !state.items.isEmpty else { return false }
            state.deferred = 0
            swap(&state.items, &batch)
            return true
        }
    }

    /// Before the loop blocks, with its driver armed: publishes `promise`, unless items arrived
    /// without a wake-up since the loop last looked, which it must file first; then takes them
    /// (see ``takeDeferred(into:)``) and returns true, and the loop stays awake. With a wake-up
    /// pending the promise is published as is: that wake-up takes the queue before anything else.
    func publish(_ promise: LoopPromise, orTakeInto batch: inout [LoopItem]) -> Bool {
        state.withLock { state in
            if !state.wakePending && !state.items.isEmpty {
                state.promise = .awake
                state.deferred = 0
                swap(&state.items, &batch)
                return true
            }
            state.promise = promise
            return false
        }
    }
}
