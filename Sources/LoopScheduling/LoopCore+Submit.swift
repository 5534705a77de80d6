import Scheduling

/// Submitting work: one path for tasks, timers, cancellations and jobs, from any thread.
extension LoopCore {
    /// Queues a task. Returns the entry, or an already-disposed disposable once shutdown began.
    func schedule(_ action: @escaping @Sendable () -> Void) -> any Disposable {
        let entry: LoopWork
        if isOnLoopThread, let spare = confined.spareTasks.popLast() {
            spare.action = action
            entry = spare
        } else {
            entry = LoopWork(action: action)
        }
        guard submit(.work(entry)) else { return refuse(entry) }
        return entry
    }

    /// A one-shot timer entry: a recycled one on the loop thread when there is one.
    @inline(__always)
    func makeTimer(deadline: Int64, isWall: Bool, action: @escaping @Sendable () -> Void) -> LoopTimer {
        if isOnLoopThread, let spare = confined.spareTimers.popLast() {
            spare.deadline = deadline
            spare.isWall = isWall
            spare.action = action
            return spare
        }
        return LoopTimer(core: self, deadline: deadline, isWall: isWall, action: action)
    }

    /// Queues a timer for the timer store. The same refusal as ``schedule(_:)``.
    func scheduleTimer(_ entry: LoopTimer) -> any Disposable {
        guard submit(.work(entry)) else { return refuse(entry) }
        return entry
    }

    /// Releases a refused entry's closure and reports it disposed (rule 4.9: inert after shutdown).
    /// A refused handler timer hears `timerCancelledByScheduler`, as a pending one does at
    /// shutdown: an `await` on it must never be left suspended.
    private func refuse(_ entry: LoopWork) -> any Disposable {
        _ = ActionLifecycle.dispose(entry.state)
        if entry.isTimer { unsafeDowncast(entry, to: LoopTimer.self).cancelledByScheduler() }
        entry.releaseAction()
        return Disposables.disposed
    }

    /// The one submit-and-wake path.
    ///
    /// On the loop thread: a timer goes straight into the store, a task or job into the loop-local
    /// queue (no lock, no wake-up; outside a batch the idle handle keeps the loop from blocking).
    /// Elsewhere: the remote queue, waking the loop only when the loop needs it (see
    /// ``RemoteQueue``: a task does unless a wake-up is pending; a timer the armed driver covers
    /// does not). Work is accepted while the lifecycle is `open`; jobs also while it is
    /// `draining`, since no task may be stranded (Docs/Design.md §8.2) — after that they go to the
    /// fallback executor.
    @inline(__always)
    func submit(_ item: LoopItem) -> Bool {
        if isOnLoopThread {
            guard accepts(item) else { return false }
            if case .work(let entry) = item, entry.isTimer {
                if !confined.inBatch { fileDeferredBeforeLocalTimer() }
                confined.timers.insert(unsafeDowncast(entry, to: LoopTimer.self))
            } else {
                confined.localItems.append(item)
                if !confined.inBatch { handles.startIdle() }
            }
            return true
        }
        return remote.submit(item, if: { accepts(item) }, wake: { handles.wake() })
    }

    @inline(__always)
    private func accepts(_ item: LoopItem) -> Bool {
        switch item {
        case .taskJob, .actorJob:
            let state = lifecycle.state
            return state == .open || state == .draining
        case .work, .cancelled:
            return lifecycle.isOpen
        }
    }

    /// Called by a timer's `dispose()` when it won the timer away from `pending` (the closure is
    /// already released): the timer leaves the store now on the loop thread, or from another
    /// thread when the loop next looks at its queue — within ``LoopCore/flushInterval``, waking it
    /// only to start flushing (see ``RemoteQueue``) — and never only at its deadline. (Disposed
    /// tasks stay queued, closure-less, until the loop passes them.)
    func timerDisposed(_ timer: LoopTimer) {
        if isOnLoopThread {
            if confined.timers.remove(timer) { confined.stats.disposedBeforeRun += 1 }
            return
        }
        // Refused once shutdown began: shutdown disposes every timer anyway.
        _ = remote.submit(.cancelled(timer), if: { lifecycle.isOpen }, wake: { handles.wake() })
    }
}
