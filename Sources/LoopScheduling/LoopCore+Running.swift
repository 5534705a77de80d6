import Scheduling
import Synchronization

/// Running work on the loop thread: the remote batch, the local queue, due timers, and the
/// libuv callbacks that trigger them.
extension LoopCore {
    // MARK: Running work (loop thread)

    /// Runs or files what other threads queued, in their order: tasks run right from the batch
    /// (no copy into the local queue), timers go into their heap, and timers disposed off the loop
    /// leave it now.
    func runRemoteBatch() -> Bool {
        // `batch` holds the emptied arrays of the previous round: they become the queue's spare.
        if case .shuttingDown = remote.take(into: &batch) { shutdownRequested = true }
        if batch.submitted.isEmpty && batch.cancelled.isEmpty { return false }
        // Moved into locals, so iterating borrows each entry instead of retaining it.
        var submitted: [LoopWork] = []
        var cancelled: [LoopTimer] = []
        swap(&submitted, &batch.submitted)
        swap(&cancelled, &batch.cancelled)
        for entry in submitted {
            if !entry.isTimer {
                run(entry)
            } else if entry.isDisposed {
                stats.disposedBeforeRun += 1
            } else {
                insertTimer(unsafeDowncast(entry, to: LoopTimer.self))
            }
        }
        for entry in cancelled where entry.heapIndex >= 0 {
            removeTimer(entry)
            stats.disposedBeforeRun += 1
        }
        submitted.removeAll(keepingCapacity: submitted.capacity <= 65_536)
        cancelled.removeAll(keepingCapacity: cancelled.capacity <= 65_536)
        batch.submitted = submitted
        batch.cancelled = cancelled
        return true
    }

    @inline(__always)
    func run(_ entry: LoopWork) {
        if ActionLifecycle.claimRun(entry.state) {
            let action = entry.action.take()
            stats.tasksRun += 1
            action?()
        } else {
            stats.disposedBeforeRun += 1
        }
    }

    /// Runs the tasks queued on the loop so far; tasks they schedule run in the next round. The
    /// queue is moved into a local first, so iterating it borrows each entry instead of retaining it.
    func runLocalTasks() -> Bool {
        guard !localTasks.isEmpty else { return false }
        var tasks = spareTasks
        spareTasks = []
        swap(&tasks, &localTasks)
        for entry in tasks { run(entry) }
        tasks.removeAll(keepingCapacity: tasks.capacity <= 65_536)
        spareTasks = tasks
        return true
    }

    /// One batch: remote work, local tasks and due timers, alternating until nothing is left or
    /// the round limit lets the loop poll again, with the scheduler current throughout.
    func runPendingWork() {
        noteLoopThread()
        guard !isRunningWork, !finalShutdownStarted else { return }
        isRunningWork = true
        do {
            let previous = CurrentScheduler.exchange(scheduler)
            var rounds = 0
            while rounds < Self.roundsPerCallback {
                var didWork = runRemoteBatch()
                didWork = runLocalTasks() || didWork
                didWork = fireDueTimers() || didWork
                if !didWork { break }
                rounds += 1
            }
            // Dropping our reference may deinitialize the scheduler, which asks for a shutdown:
            // that is deferred to below, since `isRunningWork` is still set.
            let ours = CurrentScheduler.exchange(previous)
            _ = ours
        }
        isRunningWork = false
        if shutdownRequested {
            finalShutdown()
            return
        }
        if localTasks.isEmpty { handles.stopIdle() } else { handles.startIdle() }
        publishStatistics()
    }

    // MARK: libuv callbacks

    func asyncFired() { runPendingWork() }

    func idleFired() { runPendingWork() }

    func timerFired() {
        armedDeadline = nil
        runPendingWork()
    }

    func prepareFired() {
        noteLoopThread()
        guard !finalShutdownStarted else { return }
        stats.loopIterations += 1
        giveBackMemory()
        armDriver()
        publishStatistics()
    }

    /// The wall clock was stepped: re-arm from the new reading and fire what is now due.
    func wallClockChanged() {
        armedDeadline = nil
        runPendingWork()
    }

}
