import Dispatch
import Scheduling
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Shutting down from any thread, and the statistics snapshot.
extension LoopCore {
    // MARK: Shutdown

    /// Begins shutdown from any thread. On another thread it returns once the loop is closed (and
    /// its own thread joined); on the loop thread it completes without waiting for itself.
    func shutdown() {
        let (began, outcome) = remote.beginShutdown()
        if began { accepting.store(false, ordering: .relaxed) }
        if isOnLoopThread {
            // The loop is awake already (we are on it): no wake-up needed.
            if case .acceptedWake = outcome { remote.wakeDone() }
            shutdownRequested = true
            if !isRunningWork { finalShutdown() }
            return
        }
        if case .acceptedWake = outcome {
            handles.wake()
            remote.wakeDone()
        }
        closedSignal.wait()
        thread?.join()
    }

    /// On the loop thread: runs every accepted task, disposes every timer, closes every handle.
    func finalShutdown() {
        guard !finalShutdownStarted else { return }
        finalShutdownStarted = true
        accepting.store(false, ordering: .relaxed)
        isRunningWork = true
        do {
            let previous = CurrentScheduler.exchange(scheduler)
            while runRemoteBatch() || runLocalTasks() {}
            let ours = CurrentScheduler.exchange(previous)
            _ = ours
        }
        isRunningWork = false
        for entry in timers.removeAll() + wallTimers.removeAll() {
            if ActionLifecycle.dispose(entry.state) == .wasPending {
                entry.releaseAction()
                stats.disposedBeforeRun += 1
            }
        }
        // No new sender can start (the lifecycle is no longer open); wait out the ones between
        // their decision and `uv_async_send` returning, then close the async handle under them.
        while remote.sendsInFlight.load(ordering: .acquiring) > 0 { sched_yield() }
        remote.markClosed()
        publishStatistics()
        handles.closeAll()
    }

    /// The last close callback ran.
    func handlesDidClose() {
        publishStatistics()
        loopThreadID.store(0, ordering: .relaxed)
        if mode == .adopted { closedSignal.leave() }
    }

    // MARK: Statistics

    /// Slots the timer heaps hold allocated (loop thread only): for the memory tests.
    var timerSlotCapacity: Int { timers.storage.capacity + wallTimers.storage.capacity }

    func publishStatistics() {
        stats.timersPending = timers.count + wallTimers.count
        published.publish(stats)
    }
}
