import Scheduling

/// Running work on the loop thread: the remote batch, the local queue, due timers, and the libuv
/// callbacks that trigger them.
extension LoopCore {
    // MARK: libuv callbacks

    func asyncFired() { runPendingWork() }

    func idleFired() { runPendingWork() }

    /// The timer driver fired: the whole timer path after the store's `nextWake` is
    /// `fireDueTimers` below.
    func timerFired() {
        confined.timers.driverFired()
        runPendingWork()
    }

    /// The wall clock was stepped: re-arm from the new reading and fire what is now due.
    func wallClockChanged() {
        confined.timers.wallClockChanged()
        runPendingWork()
    }

    /// Once per loop iteration, before the loop blocks: arm the timer driver, tell other threads
    /// what it is armed for, give memory back, publish the counters.
    func prepareFired() {
        checkCallbackThread()
        guard lifecycle.isOpen else { return }
        confined.stats.loopIterations += 1
        let now = monotonicNow()
        if confined.timers.giveBackMemory(monotonicNow: now, wallNow: wallNow()) { giveBackMemory() }
        confined.busiestRound = 0
        armAndPromise(now: now)
        publishStatistics()
        if let metricsDelegate { reportIteration(to: metricsDelegate, now: now) }
    }

    /// Arms the driver, then publishes the promise that lets timers and cancellations from other
    /// threads skip the wake-up (``RemoteQueue``). Items that arrived without one while the loop
    /// was awake are filed first and the arming redone, so the promise covers everything queued;
    /// if other threads keep winning that race, the loop stays awake and runs again instead of
    /// blocking.
    private func armAndPromise(now: Int64) {
        var now = now
        // Items waited for this look without a wake-up: look again soon while they keep coming.
        let flush = confined.flushSoon
        confined.flushSoon = false
        for _ in 0..<Self.promiseAttempts {
            let flushBy = flush ? Nanoseconds.adding(now, Self.flushInterval) : nil
            switch confined.timers.nextWake(monotonicNow: now, wallNow: wallNow(), flushBy: flushBy) {
            case .keep: break
            case .runNow:
                // Not blocking: the idle callback takes the queue, so the loop stays awake.
                handles.startIdle()
                return
            case .arm(let nanoseconds): handles.arm(in: nanoseconds)
            }
            // With `flushBy`, the arming is at or before it (`nextWake`).
            let promise = RemoteQueue.LoopPromise(
                armedDeadline: confined.timers.armedDeadline ?? .max,
                isFlushing: flushBy != nil
            )
            guard fileDeferred(takenBy: { remote.publish(promise, orTakeInto: &$0) }) else { return }
            // Filing took time: arming from the old reading would fire late.
            now = monotonicNow()
        }
        handles.startIdle()
    }

    /// Hands the loop's spare buffer to `take` (one of the queue's takes of what waited without a
    /// wake-up) and files what it took. Returns whether it took anything.
    private func fileDeferred(takenBy take: (inout [LoopItem]) -> Bool) -> Bool {
        var items: [LoopItem] = []
        swap(&items, &confined.batch)
        let handedOver = items.capacity
        let took = take(&items)
        if took {
            confined.remoteCapacity = handedOver
            noteRound(items.count)
            fileDeferred(&items)
        }
        confined.batch = items
        return took
    }

    /// Files what was queued without a wake-up, outside a batch: only timers and cancellations
    /// are ever queued so, which run no user code.
    func fileDeferred(_ items: inout [LoopItem]) {
        for item in items {
            switch item {
            case .work(let entry) where entry.isTimer: file(entry)
            case .cancelled(let timer): file(cancelled: timer)
            case .work, .taskJob, .actorJob:
                preconditionFailure("LoopCore.fileDeferred: a task or job was queued without waking the loop")
            }
        }
        items.removeAll(keepingCapacity: items.capacity <= 65_536)
    }

    /// Before a timer is inserted on the loop thread outside a batch (a host's callback, `run`'s
    /// body): timers queued earlier without a wake-up go first, so equal deadlines keep their
    /// scheduling order, as when the wake-up made the loop take them at once.
    func fileDeferredBeforeLocalTimer() {
        _ = fileDeferred(takenBy: { remote.takeDeferred(into: &$0) })
    }

    // MARK: Batches

    /// One batch: remote work, local work and due timers, alternating until nothing is left or the
    /// round limit lets the loop poll again, with the scheduler current throughout. If shutdown
    /// began (here or elsewhere), the final drain follows the batch.
    func runPendingWork() {
        checkCallbackThread()
        guard !confined.inBatch else { return }
        switch lifecycle.state {
        case .open: break
        case .draining:
            finalShutdown()
            return
        case .starting, .closing, .closed:
            return
        }
        if metricsDelegate != nil && confined.iteration.wakeMillis == nil {
            confined.iteration.wakeMillis = handles.loopTimeMillis
        }
        if mode == .adopted {
            LoopThreadMarker.whileRunning { runBatch() }
        } else {
            runBatch()
        }
        if lifecycle.state == .draining {
            finalShutdown()
            return
        }
        if confined.localItems.isEmpty { handles.stopIdle() } else { handles.startIdle() }
        publishStatistics()
    }

    private func runBatch() {
        confined.inBatch = true
        let saved = CurrentScheduler.enterBatch(currentBox)
        var rounds = 0
        while rounds < Self.roundsPerCallback {
            var didWork = runRemoteItems(lockFree: rounds > 0)
            didWork = runLocalItems() || didWork
            didWork = fireDueTimers() || didWork
            if !didWork { break }
            rounds += 1
        }
        CurrentScheduler.leaveBatch(saved)
        confined.inBatch = false
    }

    /// Runs or files what other threads queued, in their order: tasks and jobs run right from the
    /// batch (no copy into the local queue), timers go into the store, and timers disposed off the
    /// loop leave it now. The array is moved into a local first, so iterating borrows each entry
    /// instead of retaining it, and no access to `confined` is open while user code runs.
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
    func runRemoteItems(lockFree: Bool = false) -> Bool {
        if lockFree, !remote.mayHaveItems { return false }
        var items: [LoopItem] = []
        swap(&items, &confined.batch)
        confined.remoteCapacity = items.capacity
        if remote.take(into: &items) { confined.flushSoon = true }
        let didWork = !items.isEmpty
        noteRound(items.count)
        for item in items {
            switch item {
            case .work(let entry):
                if entry.isTimer { file(entry) } else { run(entry) }
            case .cancelled(let timer):
                file(cancelled: timer)
            case .taskJob(let job):
                runTaskJob(job)
            case .actorJob(let job):
                runActorJob(job)
            }
        }
        recycle(&items)
        confined.batch = items
        return didWork
    }

    /// A timer from another thread goes into the store, unless it was disposed on the way.
    @inline(__always)
    private func file(_ entry: LoopWork) {
        if entry.isDisposed {
            confined.stats.disposedBeforeRun += 1
        } else {
            confined.timers.insert(unsafeDowncast(entry, to: LoopTimer.self))
        }
    }

    /// A timer disposed on another thread leaves the store (if it got there: one still queued
    /// behind it was skipped by ``file(_:)``).
    @inline(__always)
    private func file(cancelled timer: LoopTimer) {
        if confined.timers.remove(timer) { confined.stats.disposedBeforeRun += 1 }
    }

    /// Runs the work queued on the loop so far; what it schedules runs in the next round.
    func runLocalItems() -> Bool {
        guard !confined.localItems.isEmpty else { return false }
        var items: [LoopItem] = []
        swap(&items, &confined.spareItems)
        swap(&items, &confined.localItems)
        noteRound(items.count)
        for item in items {
            switch item {
            case .work(let entry): run(entry)
            case .taskJob(let job): runTaskJob(job)
            case .actorJob(let job): runActorJob(job)
            case .cancelled: preconditionFailure("LoopCore.runLocalItems: a cancellation in the loop-local queue")
            }
        }
        recycle(&items)
        confined.spareItems = items
        return true
    }

    @inline(__always)
    func run(_ entry: LoopWork) {
        if ActionLifecycle.claimRun(entry.state) {
            let action = entry.action.take()
            confined.stats.tasksRun += 1
            action?()
        } else {
            confined.stats.disposedBeforeRun += 1
        }
    }

    // MARK: Timers

    /// Fires every timer due by the clocks read once now, in `(deadline, sequence)` order. Entries
    /// inserted during this pass (a periodic timer re-armed, a zero-delay timer scheduled by a
    /// timer) wait for the next pass, so a timer that keeps re-arming cannot starve the others.
    func fireDueTimers() -> Bool {
        // Once shutdown began no timer starts, due or not: shutdown disposes them all.
        guard lifecycle.isOpen else { return false }
        let limit = confined.timers.nextSequence
        var fired = 0
        if confined.timers.hasMonotonicTimers {
            let now = monotonicNow()
            while lifecycle.isOpen, var due = confined.timers.popDue(monotonicNow: now, limit: limit) {
                fire(due.timer, lateness: due.lateness, wallLateness: nil)
                recycle(&due.timer)
                fired += 1
            }
        }
        if confined.timers.hasWallTimers {
            let now = wallNow()
            while lifecycle.isOpen, var due = confined.timers.popDueWall(wallNow: now, limit: limit) {
                fire(due.timer, lateness: due.lateness, wallLateness: due.lateness)
                recycle(&due.timer)
                fired += 1
            }
        }
        noteRound(fired)
        return fired > 0
    }

    /// Runs one popped timer, unless it was disposed first; a periodic timer that stays active goes
    /// back into the store at its next grid point.
    func fire(_ timer: LoopTimer, lateness: Int64, wallLateness: Int64?) {
        guard timer.isPeriodic else {
            guard ActionLifecycle.claimRun(timer.state) else {
                confined.stats.disposedBeforeRun += 1
                return
            }
            let action = timer.action.take()
            recordFire(lateness: lateness)
            if let action { action() } else { timer.fireHandler() }
            return
        }
        let periodic = unsafeDowncast(timer, to: PeriodicLoopTimer.self)
        guard ActionLifecycle.claimTick(periodic.state) else {
            confined.stats.disposedBeforeRun += 1
            return
        }
        if let wallLateness {
            LoopTimerStore.moveToMonotonicGrid(periodic, wallLateness: wallLateness, monotonicNow: monotonicNow())
        }
        recordFire(lateness: lateness)
        periodic.tick?(periodic.missedTicks)
        if ActionLifecycle.endTick(periodic.state) {
            // Also when shutdown began during the tick: the final drain disposes it with the rest.
            confined.timers.reinsertAfterTick(periodic, monotonicNow: monotonicNow())
        } else {
            periodic.releaseAction()
        }
    }

    // MARK: Recycling

    @inline(__always)
    func noteRound(_ handled: Int) {
        if handled > confined.busiestRound { confined.busiestRound = handled }
    }

    /// Once the loop is quiet (no timer due within the timer store's quiet period, the moment its
    /// heaps shrink too): the queue buffers and spare entries a burst grew go back to the
    /// allocator, so a loop at rest holds what a fresh one does. Only what is far beyond this
    /// iteration's busiest round goes (more than four times it, and more than ``keptAtRest``), so
    /// steady work keeps its buffers and spares; a burst's leftovers go in the first quiet
    /// iteration after it that handled little.
    ///
    /// The remote queue's two buffers go even in an iteration that handled nothing, typically the
    /// wake-up right after a burst that its batch already served. The loop's own buffers and spare
    /// entries, which keep on-loop scheduling allocation-free, go only after an iteration that did
    /// some work: one that did none (that same wake-up, or a host's own I/O on an adopted loop)
    /// says nothing about their demand.
    func giveBackMemory() {
        let keep = max(Self.keptAtRest, 4 * confined.busiestRound)
        if confined.batch.capacity > keep { confined.batch = [] }
        if confined.remoteCapacity > keep { confined.remoteCapacity = remote.giveBackMemory(keepingUpTo: keep) }
        guard confined.busiestRound > 0 else { return }
        if confined.spareItems.capacity > keep { confined.spareItems = [] }
        if confined.localItems.isEmpty && confined.localItems.capacity > keep { confined.localItems = [] }
        if confined.spareTasks.capacity > keep { confined.spareTasks = [] }
        if confined.spareTimers.capacity > keep { confined.spareTimers = [] }
    }

    /// Empties a processed queue buffer, keeping the task entries only the loop still holds.
    @inline(__always)
    func recycle(_ items: inout [LoopItem]) {
        while let item = items.popLast() {
            guard case .work(var entry) = consume item, !entry.isTimer,
                confined.spareTasks.count < Self.recycleLimit,
                Self.isOnlyReference(&entry)
            else { continue }
            // Its run ended (or it was disposed): nobody else can see it any more.
            entry.state.store(ActionLifecycle.pending, ordering: .relaxed)
            confined.spareTasks.append(entry)
        }
        if items.capacity > 65_536 { items = [] }
    }

    /// Whether `entry` is referenced by nothing but `entry`: no other strong reference, and no weak
    /// or unowned one either (the runtime counts 1 of each for a live object) — a user's `weak var`
    /// disposable must become nil, never come back disposing a stranger's action after reuse.
    @inline(__always)
    static func isOnlyReference<Entry: LoopWork>(_ entry: inout Entry) -> Bool {
        isKnownUniquelyReferenced(&entry) && _getWeakRetainCount(entry) == 1 && _getUnownedRetainCount(entry) == 1
    }

    /// Keeps a fired one-shot timer that only the loop still holds.
    @inline(__always)
    func recycle(_ timer: inout LoopTimer) {
        guard !timer.isPeriodic, confined.spareTimers.count < Self.recycleLimit,
            Self.isOnlyReference(&timer)
        else { return }
        timer.state.store(ActionLifecycle.pending, ordering: .relaxed)
        confined.spareTimers.append(timer)
    }

    // MARK: Statistics

    @inline(__always)
    private func recordFire(lateness: Int64) {
        confined.stats.recordFire(lateness: lateness)
        if metricsDelegate != nil {
            confined.iteration.maxLateness = max(confined.iteration.maxLateness, lateness)
            confined.iteration.totalLateness = Nanoseconds.adding(confined.iteration.totalLateness, lateness)
        }
    }

    func publishStatistics() {
        confined.stats.timersPending = confined.timers.count
        published.publish(confined.stats)
    }
}
