@_spi(SchedulerEngine) import Scheduling
import Synchronization

/// The loop's intake: work handed to the loop by other threads, the loop's lifecycle, and the
/// wake-up — one lock orders all three.
///
/// Submitting, beginning the shutdown and closing the intake are this queue's methods, because
/// each must be ordered against the others: a task is either appended before shutdown began (and
/// then drained) or refused after it, never lost between the two; and the loop closes its async
/// handle (``closeIntake(localQueueIsEmpty:)``) under the same lock the wake-up (`uv_async_send`)
/// is sent under, so no sender can be inside `uv_async_send` on a closing handle. One lock, taken
/// once per submission and once per batch on the loop, which swaps the array out (NIO-style) and
/// runs user code outside the lock.
///
/// **Which submissions wake the loop.** Tasks and jobs wake it when the queue has no wake-up
/// pending (`wakePending` stays set until the loop takes the batch). Timers and cancellations
/// often need none, which matters because a `withTimeout` or a cancelled `sleep` from the global
/// pool is one of each, and a wake-up per item made the loop a third busy thread. The loop
/// publishes here, under this lock, what it has promised itself (``LoopPromise``):
///
/// - while it is **awake** (from taking the queue until it next prepares to block), it takes the
///   queue again before blocking: no timer or cancellation needs a wake-up;
/// - while it is **flushing** — armed to look again within ``LoopCore/flushInterval``, at a
///   monotonic deadline `A` (published only when the queue held nothing unfiled, after the driver
///   was armed) — its next wake-up comes by `A` and begins by taking the queue, before any timer
///   fires or the driver is re-armed: a cancellation needs no wake-up, nor a monotonic timer due
///   at or after `A`. A timer due earlier, or on the wall clock (converted at every arming), wakes it;
/// - otherwise (armed further out, or not at all) the first timer or cancellation that could have
///   waited wakes the loop *and* asks it to flush: the loop then arms its next look within the
///   interval, and keeps doing so while items keep waiting for it. So items that skip the wake-up
///   wait at most one interval — a cancelled timer leaves the store, its memory and
///   `timersPending` that soon, never at some later deadline — and a loop that stops getting them
///   arms nothing extra: an idle loop stays asleep.
///
/// The promise only moves later after the loop took the queue (a fired driver or a stepped wall
/// clock, both of which take it before anything else), so an item left without a wake-up is
/// always filed before it could be late. The ``deferredLimit``-th item in a row left without a
/// wake-up wakes the loop: that bounds what cancelled timers hold within one interval (56 bytes
/// each, their closures are released already) and the work the loop finds queued.
/// Wakes a loop from any thread: ``UVHandles``' async handle, or a test's stand-in.
protocol LoopWaker: AnyObject {
    /// Makes the loop take its queue soon; coalescing. Called under the queue's lock.
    func wake()
}

// Safe: `waker` is written once, before the queue is shared with any other thread (see
// `setWaker`); everything else is a lock, an atomic or the lifecycle's atomic.
final class RemoteQueue: @unchecked Sendable {
    /// What the loop promised about its next look at the queue.
    struct LoopPromise: Equatable {
        /// `Int64.min` while awake, else the monotonic deadline the driver is armed for
        /// (`Int64.max`: none).
        var armedDeadline: Int64
        /// The armed deadline is a look within ``LoopCore/flushInterval``, not just a timer's.
        var isFlushing: Bool

        /// The loop takes the queue again before it blocks.
        static let awake = LoopPromise(armedDeadline: .min, isFlushing: true)
        /// Nothing armed: the loop may be blocked for good. Not `awake` before the first promise:
        /// the loop's first prepare may come while it is still starting, when it promises nothing
        /// and blocks.
        static let idle = LoopPromise(armedDeadline: .max, isFlushing: false)
        var isAwake: Bool { armedDeadline == .min }
    }

    /// What a submission needs of the loop.
    private enum Need {
        /// A wake-up, as soon as possible.
        case wake
        /// Nothing: the promise covers it.
        case nothing
        /// Nothing for itself, but the loop should flush: wake it and ask for that.
        case flush
    }

    /// The loop is woken by the item that makes this many queued without a wake-up.
    static let deferredLimit = 1024

    private struct State {
        var items: [LoopItem] = []
        var wakePending = false
        var promise = LoopPromise.idle
        /// Items queued without a wake-up since the loop last took the queue.
        var deferred = 0
        /// Some of them came while the loop was armed rather than awake: they wait for the loop's
        /// next look, which it brings forward to ``LoopCore/flushInterval`` from then on.
        var stragglers = false
    }

    private let state = LockedValue(State())
    /// Whether `items` is non-empty, readable without the lock: the loop looks at the queue every
    /// round of a batch, and most rounds (a job hopping on the loop thread) find it empty. Written
    /// under the lock, read without it: a hint, which the loop trusts only where a stale `false`
    /// is harmless (see ``LoopBatchRunner/runRemoteItems(lockFree:)``).
    private let nonEmpty = Atomic<Bool>(false)
    /// The capacity of the buffer the loop last swapped in (its buffers take turns as this
    /// queue's), so a quiet loop takes the lock only when that buffer is worth giving back. Written
    /// under the lock on every swap; read by the loop only, without it.
    private let bufferCapacity = Atomic<Int>(0)
    /// Whether the loop accepts work, is draining or closed. Its transitions that race with
    /// submissions (``beginShutdown(onLoopThread:)``, ``closeIntake(localQueueIsEmpty:)``) happen
    /// under this queue's lock.
    let lifecycle = LoopLifecycle()
    /// What wakes the loop: its async handle (``UVHandles``). Unowned: the handles keep themselves
    /// alive until their last close callback, and nothing is sent after the intake closed.
    private unowned(unsafe) var waker: (any LoopWaker)?

    init() {}

    /// Called once by the engine when its handles are set up, before anything can be submitted.
    func setWaker(_ waker: any LoopWaker) {
        self.waker = waker
    }

    // MARK: Intake

    /// Whether the loop takes `item` now: tasks and timers while it is open; jobs also while it
    /// drains, since no task may be stranded (Docs/Design.md §8.2) — after that they go to the fallback.
    @inline(__always)
    func accepts(_ item: LoopItem) -> Bool {
        switch item {
        case .taskJob, .actorJob:
            let state = lifecycle.state
            return state == .open || state == .draining
        case .work, .cancelled, .rearmed:
            return lifecycle.isOpen
        }
    }

    /// From any thread but the loop's: appends `item` if the loop accepts it (decided under the
    /// lock, against the lifecycle's transitions) and wakes the loop if it needs to (see the
    /// type's notes).
    ///
    /// - Returns: whether the item was queued.
    @inline(__always)
    func submit(_ item: LoopItem) -> Bool {
        state.withLock { state in
            guard accepts(item) else { return false }
            state.items.append(item)
            if state.items.count == 1 { nonEmpty.store(true, ordering: .releasing) }
            guard !state.wakePending else { return true }
            let need = state.deferred < Self.deferredLimit - 1 ? Self.need(of: item, state.promise) : .wake
            switch need {
            case .nothing:
                state.deferred += 1
                if !state.promise.isAwake { state.stragglers = true }
                return true
            case .flush:
                state.stragglers = true
            case .wake:
                break
            }
            Self.wake(&state, waker)
            return true
        }
    }

    /// `open → draining`, from any thread; wakes the loop so it notices, unless the caller is the
    /// loop or a wake-up is pending. Returns whether this call began the shutdown (false: it had
    /// begun already).
    func beginShutdown(onLoopThread: Bool) -> Bool {
        state.withLock { state in
            guard lifecycle.beginShutdown() else { return false }
            if !onLoopThread && !state.wakePending { Self.wake(&state, waker) }
            return true
        }
    }

    /// On the loop thread, during the final drain: `draining → closing` if nothing is queued here
    /// and `localQueueIsEmpty`; from then on nothing is accepted and no wake-up is sent, so the
    /// handles may close. Returns whether the intake closed (false: work arrived, drain again).
    func closeIntake(localQueueIsEmpty: Bool) -> Bool {
        state.withLock { state in
            guard state.items.isEmpty && localQueueIsEmpty else { return false }
            lifecycle.beginClosing()
            return true
        }
    }

    /// The one place a wake-up is sent: under the lock, so never on a closing handle.
    @inline(__always)
    private static func wake(_ state: inout State, _ waker: (any LoopWaker)?) {
        state.wakePending = true
        waker!.wake()
    }

    /// What `item` needs of the loop, given its promise.
    @inline(__always)
    private static func need(of item: LoopItem, _ promise: LoopPromise) -> Need {
        switch item {
        case .work(let entry):
            guard entry.isTimer else { return .wake }
            if promise.isAwake { return .nothing }
            // Wall deadlines are armed through a conversion re-done at every wake-up: keep waking.
            guard !entry.isWall else { return .wake }
            // The submitter still owns the entry: its deadline is settled.
            guard unsafeDowncast(entry, to: LoopTimer.self).deadlineBeforePublication >= promise.armedDeadline else { return .wake }
            return promise.isFlushing ? .nothing : .flush
        case .rearmed(let timer):
            // Like a new timer: its deadline is written, and moved earlier.
            if promise.isAwake { return .nothing }
            guard !timer.isWall else { return .wake }
            guard timer.deadlineBeforePublication >= promise.armedDeadline else { return .wake }
            return promise.isFlushing ? .nothing : .flush
        case .cancelled:
            // A cancelled timer that fires first is skipped by its state; it only holds memory
            // and a count until the loop looks, which flushing bounds.
            return promise.isFlushing ? .nothing : .flush
        case .taskJob, .actorJob:
            return .wake
        }
    }

    /// Items waiting: for tests.
    var count: Int { state.withLock { $0.items.count } }

    /// Whether anything may be queued, without the lock (see `nonEmpty`).
    var mayHaveItems: Bool { nonEmpty.load(ordering: .acquiring) }

    /// Room the buffer has: for tests.
    var capacity: Int { state.withLock { $0.items.capacity } }

    /// Drops the buffer if it is empty and has room for more than `keep` items (the loop is quiet).
    /// Takes the lock only when the buffer's capacity, as of the loop's last swap, is worth it.
    func giveBackMemory(keepingUpTo keep: Int) {
        guard bufferCapacity.load(ordering: .relaxed) > keep else { return }
        state.withLock { state in
            if state.items.isEmpty && state.items.capacity > keep { state.items = [] }
            bufferCapacity.store(state.items.capacity, ordering: .relaxed)
        }
    }

    /// Swaps everything queued into `batch` (which the caller emptied, keeping its capacity, so the
    /// loop's buffers — the batch runner's and the timers' deferred one — take turns here and
    /// steady-state submission does not allocate). The loop is awake until it publishes a promise
    /// again.
    ///
    /// - Returns: whether items had waited without a wake-up while the loop was armed: then the
    ///   loop looks again within ``LoopCore/flushInterval``, so such items (and the memory and the
    ///   `timersPending` count of cancelled timers) wait no longer than that.
    @inline(__always)
    func take(into batch: inout [LoopItem]) -> Bool {
        state.withLock { state in
            let stragglers = state.stragglers
            state.wakePending = false
            state.promise = .awake
            handOver(&state, into: &batch)
            return stragglers
        }
    }

    /// Under the lock: everything queued goes to the loop's `batch`, whose emptied buffer the
    /// queue keeps (noting its capacity for ``giveBackMemory(keepingUpTo:)``).
    @inline(__always)
    private func handOver(_ state: inout State, into batch: inout [LoopItem]) {
        state.deferred = 0
        state.stragglers = false
        swap(&state.items, &batch)
        bufferCapacity.store(state.items.capacity, ordering: .relaxed)
        nonEmpty.store(false, ordering: .relaxed)
    }

    /// Takes the queue when it holds only items that were left without a wake-up (timers and
    /// cancellations: no user code), for the loop to file outside a batch. Returns whether it did.
    ///
    /// The promise stands. Filing leaves the driver armed as it was, and under an armed promise
    /// adds only timers due no earlier than that. Claiming `awake` here could be wrong: this may
    /// run after the loop's last look before it blocks (a host's prepare callback after the
    /// scheduler's).
    func takeDeferred(into batch: inout [LoopItem]) -> Bool {
        state.withLock { state in
            guard !state.wakePending, !state.items.isEmpty else { return false }
            handOver(&state, into: &batch)
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
                handOver(&state, into: &batch)
                return true
            }
            state.promise = promise
            return false
        }
    }
}
