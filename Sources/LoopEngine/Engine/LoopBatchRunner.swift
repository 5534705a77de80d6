@_spi(SchedulerEngine) import Scheduling

/// Runs a loop's work on its thread, in batches: the remote queue's items in their order, the
/// loop-local queue, due timers, alternating until nothing is left or the round limit lets the
/// loop poll for I/O again, with the scheduler current throughout (NIO's `SelectableEventLoop`
/// alternates its task queue and scheduled tasks the same way).
///
/// Its state is the loop-side queue buffers: the local queue (work scheduled on the loop thread,
/// run after the current action, in the same iteration), the spare buffer the remote queue swaps
/// with, and whether a batch is running.
package final class LoopBatchRunner {
    // Loop-confined, never across user code (see LoopConfined).
    @exclusivity(unchecked) private var state: LoopConfined<Queues>

    init(loopThread: LoopThreadIdentity) {
        state = LoopConfined(Queues(), loopThread: loopThread)
    }

    package struct Queues {
        /// Tasks and jobs scheduled from the loop thread, run in the same iteration.
        var localItems: [LoopItem] = []
        /// The emptied buffer of the previous local round, reused so steady work does not allocate.
        var spareItems: [LoopItem] = []
        /// The remote queue's items, swapped out once per round.
        var batch: [LoopItem] = []
        /// Inside a batch of user work: a `shutdown()` from an action completes after the batch,
        /// and `schedule` from outside a batch (a host callback, `run`'s body) must start the idle
        /// handle.
        var inBatch = false
    }

    /// The most batch rounds one callback runs before letting the loop poll for I/O again.
    static let roundsPerCallback = 64

    var inBatch: Bool { state.value.inBatch }

    /// Queues work scheduled on the loop thread; outside a batch the idle handle keeps the loop
    /// from blocking before it runs.
    @inline(__always)
    func enqueueLocal(_ core: LoopCore, _ item: LoopItem) {
        state.value.localItems.append(item)
        if !state.value.inBatch { core.driver.startIdle() }
    }

    // MARK: Batches

    /// A libuv callback's batch, with the scheduler current throughout; afterwards the idle handle
    /// runs only while loop-local work waits. (The callback's owner, ``LoopCore``, checks the
    /// lifecycle before and after, and drains for shutdown.)
    func runBatchOnCallback(_ core: LoopCore) {
        guard !state.value.inBatch else { return }
        core.reporter.loopWoke(atLoopMillis: core.driver.loopTimeMillis)
        if core.mode.isRunByOthers {
            // An own or caller thread is marked for as long as it runs the loop; an adopted loop's
            // thread, which is the host's, only while its batches run.
            let marked = LoopThreadMarker.enter()
            runBatch(core)
            LoopThreadMarker.leave(marked)
        } else {
            runBatch(core)
        }
        if state.value.localItems.isEmpty { core.driver.stopIdle() } else { core.driver.startIdle() }
    }

    private func runBatch(_ core: LoopCore) {
        let saved = enterBatch(core)
        var rounds = 0
        while rounds < Self.roundsPerCallback {
            var didWork = runRemoteItems(core, lockFree: rounds > 0)
            didWork = runLocalItems(core) || didWork
            didWork = core.timers.fireDue(core) || didWork
            if !didWork { break }
            rounds += 1
        }
        leaveBatch(saved)
    }

    /// The final drain of a shutdown: every accepted task and job runs (jobs may keep arriving:
    /// they are never refused), then the intake closes at a moment both queues are empty, so
    /// nothing accepted is left behind.
    func drainAndCloseIntake(_ core: LoopCore) {
        let saved = enterBatch(core)
        var closed = false
        while !closed {
            while runRemoteItems(core) || runLocalItems(core) {}
            closed = core.remote.closeIntake(localQueueIsEmpty: state.value.localItems.isEmpty)
        }
        leaveBatch(saved)
    }

    @inline(__always)
    private func enterBatch(_ core: LoopCore) -> CurrentScheduler.Saved {
        state.value.inBatch = true
        return CurrentScheduler.enterBatch(core.currentBox)
    }

    @inline(__always)
    private func leaveBatch(_ saved: CurrentScheduler.Saved) {
        CurrentScheduler.leaveBatch(saved)
        state.value.inBatch = false
    }

    /// Runs or files what other threads queued, in their order: tasks and jobs run right from the
    /// batch (no copy into the local queue), timers are filed, and timers disposed off the loop
    /// leave the store now. The buffer is moved into a local first, so iterating borrows each entry
    /// instead of retaining it, and no access to the state is open while user code runs.
    ///
    /// `lockFree`: first ask the queue's lock-free hint whether anything is queued, which saves a
    /// lock per round of a batch that hops jobs on the loop thread. Only for the rounds after a
    /// batch's first, which always takes under the lock: a submitter whose `uv_async_send` found
    /// the wake-up already pending (and consumed by this very callback) sent nothing, and nothing
    /// orders its write of the hint before this read. Had the batch left its item on a stale
    /// "empty", `wakePending` would stay set and nothing would wake the loop for it again. The
    /// first round's lock synchronises with every submission that finished before it; a later
    /// round's stale read leaves the item to the next round, or to the prepare's locked look
    /// before blocking.
    func runRemoteItems(_ core: LoopCore, lockFree: Bool = false) -> Bool {
        if lockFree, !core.remote.mayHaveItems { return false }
        var items: [LoopItem] = []
        swap(&items, &state.value.batch)
        if core.remote.take(into: &items) { core.timers.flushSoon() }
        let didWork = !items.isEmpty
        core.recycler.noteRound(items.count)
        for item in items {
            switch item {
            case .task(let entry):
                run(core, entry)
            case .timer(let timer):
                core.timers.file(core, timer)
            case .cancelled(let timer):
                core.timers.remove(core, timer)
            case .rearmed(let timer):
                core.timers.reposition(core, timer)
            case .taskJob(let job):
                runTaskJob(core, job)
            case .actorJob(let job):
                runActorJob(core, job)
            }
        }
        core.recycler.recycle(&items)
        state.value.batch = items
        return didWork
    }

    /// Runs the work queued on the loop so far; what it schedules runs in the next round.
    func runLocalItems(_ core: LoopCore) -> Bool {
        guard !state.value.localItems.isEmpty else { return false }
        var items: [LoopItem] = []
        swap(&items, &state.value.spareItems)
        swap(&items, &state.value.localItems)
        core.recycler.noteRound(items.count)
        for item in items {
            switch item {
            case .task(let entry): run(core, entry)
            case .taskJob(let job): runTaskJob(core, job)
            case .actorJob(let job): runActorJob(core, job)
            case .timer, .cancelled, .rearmed:
                preconditionFailure("LoopBatchRunner.runLocalItems: a timer item in the loop-local queue (filed at once)")
            }
        }
        core.recycler.recycle(&items)
        state.value.spareItems = items
        return true
    }

    @inline(__always)
    private func run(_ core: LoopCore, _ entry: LoopWork) {
        if ActionLifecycle.claimRun(entry.state) {
            let action = entry.action.take()
            core.reporter.taskRan()
            action?()
        } else {
            core.reporter.disposedBeforeRun()
        }
    }

    /// A job of a task that prefers the scheduler: run with it as the task executor only, so its
    /// nonisolated code calls nonisolated functions without a hop.
    @inline(__always)
    private func runTaskJob(_ core: LoopCore, _ job: UnownedJob) {
        core.reporter.taskRan()
        job.runSynchronously(on: core.taskExecutor!)
    }

    /// A job of an actor pinned to the scheduler: run isolated to the loop's actor executor.
    @inline(__always)
    private func runActorJob(_ core: LoopCore, _ job: UnownedJob) {
        core.reporter.taskRan()
        job.runSynchronously(on: core.unownedActorExecutor)
    }

    // MARK: Memory

    /// Once the loop is quiet: buffers far beyond the iteration's demand go back to the allocator
    /// (see ``LoopEntryRecycler/keep``). The buffer the remote queue holds goes even after an
    /// iteration that handled nothing (typically the wake-up right after a burst its batch already served);
    /// the loop's own only after one that did some work, since an idle one says nothing about
    /// their demand.
    func giveBackMemory(_ core: LoopCore) {
        let keep = core.recycler.keep
        if state.value.batch.capacity > keep { state.value.batch = [] }
        core.remote.giveBackMemory(keepingUpTo: keep)
        guard core.recycler.didWork else { return }
        if state.value.spareItems.capacity > keep { state.value.spareItems = [] }
        if state.value.localItems.isEmpty && state.value.localItems.capacity > keep { state.value.localItems = [] }
    }

    /// Buffer capacities: for the memory tests.
    var bufferCapacities: (batch: Int, local: Int, spare: Int) {
        (state.value.batch.capacity, state.value.localItems.capacity, state.value.spareItems.capacity)
    }
}
