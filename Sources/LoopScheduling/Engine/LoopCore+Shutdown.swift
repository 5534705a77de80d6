import Scheduling

/// Shutting down from any thread.
extension LoopCore {
    /// Begins shutdown from any thread, and on a thread that runs no loop waits until the loop is
    /// closed (and its own thread joined).
    ///
    /// On this loop's thread it completes after the current batch (or at once outside a batch)
    /// without waiting for itself. On another loop's thread it only begins: waiting there could
    /// deadlock two loops that shut each other down.
    func shutdown() {
        beginShutdown()
        if isOnLoopThread || LoopThreadMarker.isLoopThread { return }
        lifecycle.waitUntilClosed()
        thread?.join()
    }

    /// Begins shutdown without ever blocking: `open → draining` and a wake-up for the loop; on the
    /// loop thread outside a batch, the final drain at once. Idempotent.
    func beginShutdown() {
        let onLoop = isOnLoopThread
        remote.withLock { wakePending, _ in
            guard lifecycle.beginShutdown() else { return }
            // The loop must notice; it is awake already if we are on it.
            if !onLoop && !wakePending {
                wakePending = true
                handles.wake()
            }
        }
        if onLoop && !confined.inBatch && lifecycle.state == .draining { finalShutdown() }
    }

    /// On the loop thread: runs every accepted task and job, closes the intake, disposes every
    /// timer, closes every handle.
    func finalShutdown() {
        // On an adopted loop this may run in the host's own code (a `shutdown()` or a last release
        // on its thread, before or after its first `uv_run`): while actions run, its thread is a
        // loop thread, as in any batch.
        LoopThreadMarker.whileRunning { drainAndClose() }
    }

    private func drainAndClose() {
        confined.inBatch = true
        let saved = CurrentScheduler.enterBatch(currentBox)
        // Jobs may keep arriving while the drain runs (they are never refused); the intake closes
        // under the remote lock at a moment the queues are empty, so nothing accepted is left.
        var closed = false
        while !closed {
            while runRemoteItems() || runLocalItems() {}
            let localEmpty = confined.localItems.isEmpty
            closed = remote.withLock { _, isEmpty in
                guard isEmpty && localEmpty else { return false }
                lifecycle.beginClosing()
                return true
            }
        }
        CurrentScheduler.leaveBatch(saved)
        confined.inBatch = false
        for timer in confined.timers.removeAll() where ActionLifecycle.dispose(timer.state) == .wasPending {
            timer.cancelledByScheduler()
            timer.releaseAction()
            confined.stats.disposedBeforeRun += 1
        }
        publishStatistics()
        handles.closeAll()
    }

    /// The last close callback ran. An owned loop is closed by `runLoopToCompletion` when `uv_run`
    /// returns; an adopted one belongs to the host, so the scheduler is closed now.
    func handlesDidClose() {
        publishStatistics()
        // Spare timers point back at the core: dropping them breaks that cycle.
        confined.spareTimers = []
        confined.spareTasks = []
        // The loop thread is done with the loop; its id may soon belong to another thread (glibc
        // reuses thread descriptors), which must not pass for the loop thread.
        forgetLoopThread()
        if mode == .adopted { lifecycle.didClose() }
    }

    /// Slots the timer store holds allocated (loop thread only): for the memory tests.
    var timerSlotCapacity: Int { confined.timers.slotCapacity }
}
