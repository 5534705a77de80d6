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
/// **Which submissions wake the loop** is ``LoopWakeRule``'s to say: tasks and jobs do, timers,
/// cancellations and re-arms often not, by what the loop promised about its next look.
// Safe: `waker` is written once, before the queue is shared with any other thread (see
// `setWaker`); everything else is a lock, an atomic or the lifecycle's atomic.
package final class RemoteQueue: @unchecked Sendable {
    private struct State {
        var items: [LoopItem] = []
        var rule = LoopWakeRule()
    }

    private let state = LockedValue(State())
    /// Whether `items` is non-empty, readable without the lock: the loop looks at the queue every
    /// round of a batch, and most rounds (a job hopping on the loop thread) find it empty. Written
    /// under the lock, read without it: a hint, which the loop trusts only where a stale `false`
    /// is harmless (see ``LoopBatchRunner/runRemoteItems(lockFree:)``).
    private let nonEmpty = Atomic<Bool>(false)
    #if compiler(>=6.3) && ExperimentalExecutors && os(Linux)
    /// Whether a task or job waits in `items`: written under the lock, read without it. Timers and
    /// cancellations, which may wait up to ``LoopCore/flushInterval`` without waking an idle
    /// loop, do not count. The placement hint of `LoopExecutorFactory`'s default executor (trait
    /// ExperimentalExecutors; without it, nothing of this is compiled).
    private let holdsWork = Atomic<Bool>(false)
    #endif
    /// The capacity of the buffer the loop last swapped in (its buffers take turns as this
    /// queue's), so a quiet loop takes the lock only when that buffer is worth giving back. Written
    /// under the lock on every swap; read by the loop only, without it.
    private let bufferCapacity = Atomic<Int>(0)
    /// Whether the loop accepts work, is draining or closed. Its transitions that race with
    /// submissions (``beginShutdown(onLoopThread:)``, ``closeIntake(localQueueIsEmpty:)``) happen
    /// under this queue's lock.
    let lifecycle = LoopLifecycle()
    /// What wakes the loop: its driver (libuv's async handle, a SwiftNIO event loop's `execute`).
    /// Unowned: the driver lives as long as the engine that holds it, and nothing is sent after the
    /// intake closed.
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
        case .task, .timer, .cancelled, .rearmed:
            return lifecycle.isOpen
        }
    }

    /// From any thread but the loop's: appends `item` if the loop accepts it (decided under the
    /// lock, against the lifecycle's transitions) and wakes the loop if it needs to (see
    /// ``LoopWakeRule``).
    ///
    /// - Returns: whether the item was queued.
    @inline(__always)
    func submit(_ item: LoopItem) -> Bool {
        state.withLock { state in
            guard accepts(item) else { return false }
            state.items.append(item)
            if state.items.count == 1 { nonEmpty.store(true, ordering: .releasing) }
            #if compiler(>=6.3) && ExperimentalExecutors && os(Linux)
            if item.isWork, !holdsWork.load(ordering: .relaxed) { holdsWork.store(true, ordering: .relaxed) }
            #endif
            if state.rule.admit(item) { waker!.wake() }
            return true
        }
    }

    /// `open → draining`, from any thread; wakes the loop so it notices, unless the caller is the
    /// loop or a wake-up is pending. Returns whether this call began the shutdown (false: it had
    /// begun already).
    func beginShutdown(onLoopThread: Bool) -> Bool {
        state.withLock { state in
            guard lifecycle.beginShutdown() else { return false }
            if !onLoopThread && state.rule.wakeUnlessPending() { waker!.wake() }
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

    /// Items waiting: for tests.
    var count: Int { state.withLock { $0.items.count } }

    /// Whether anything may be queued, without the lock (see `nonEmpty`).
    var mayHaveItems: Bool { nonEmpty.load(ordering: .acquiring) }

    #if compiler(>=6.3) && ExperimentalExecutors && os(Linux)
    /// Whether a task or job may be waiting, without the lock (see `holdsWork`).
    var mayHoldWork: Bool { holdsWork.load(ordering: .relaxed) }
    #endif

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
            let stragglers = state.rule.loopTookQueue()
            handOver(&state, into: &batch)
            return stragglers
        }
    }

    /// Under the lock: everything queued goes to the loop's `batch`, whose emptied buffer the
    /// queue keeps (noting its capacity for ``giveBackMemory(keepingUpTo:)``).
    @inline(__always)
    private func handOver(_ state: inout State, into batch: inout [LoopItem]) {
        state.rule.handedOver()
        swap(&state.items, &batch)
        bufferCapacity.store(state.items.capacity, ordering: .relaxed)
        nonEmpty.store(false, ordering: .relaxed)
        #if compiler(>=6.3) && ExperimentalExecutors && os(Linux)
        if holdsWork.load(ordering: .relaxed) { holdsWork.store(false, ordering: .relaxed) }
        #endif
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
            guard !state.rule.wakePending, !state.items.isEmpty else { return false }
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
            if !state.rule.wakePending && !state.items.isEmpty {
                state.rule.promise = .awake
                handOver(&state, into: &batch)
                return true
            }
            state.rule.promise = promise
            return false
        }
    }
}
