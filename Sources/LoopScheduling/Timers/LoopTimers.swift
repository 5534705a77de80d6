@_spi(SchedulerEngine) import Scheduling

/// A loop's timers on its thread: the one way into and out of the ``LoopTimerStore``, the driver
/// armed before the loop blocks, and the firing of what is due. (The store holds the arithmetic and
/// is tested without a loop; this part connects it to the loop.)
///
/// A timer's path (the timer-specific steps are in this folder and the kernel's heap and wheel; the
/// engine's submit path and the libuv callbacks carry it there):
///
/// 1. **Schedule.** `LoopScheduler.schedule(after:)` makes the entry (``LoopEntryRecycler``) and
///    submits it (``LoopCore/submit(_:)``): on the loop thread it is filed at once; from another
///    thread it goes through the ``RemoteQueue``, which wakes the loop only if the loop's armed
///    promise does not cover it, and the batch files it.
/// 2. **File.** ``file(_:)``, the only insertion: the store stamps its sequence number.
/// 3. **Wake.** Before the loop blocks, ``armAndPromise(now:)`` arms the driver for the store's
///    ``LoopTimerStore/nextWake(monotonicNow:wallNow:flushBy:)`` and publishes the promise.
/// 4. **Fire or cancel.** The driver's callback (``UVHandles``) calls ``LoopCore/timerFired()``,
///    whose batch runs ``fireDue()``; a disposed timer leaves through ``remove(_:)``, at once on
///    the loop thread, or when the loop next looks at its queue.
final class LoopTimers {
    // Loop-confined, never across user code (see LoopConfined).
    @exclusivity(unchecked) private var state: LoopConfined<LoopTimerStore>

    init(loopThread: LoopThreadIdentity) {
        state = LoopConfined(LoopTimerStore(), loopThread: loopThread)
    }

    var count: Int { state.value.count }
    /// The monotonic time the driver is armed for: for the tests.
    var armedDeadline: Int64? { state.value.armedDeadline }
    /// Slots the store holds allocated: for the memory tests.
    var slotCapacity: Int { state.value.slotCapacity }

    // MARK: File and remove

    /// Files a timer: the one insertion into the store. A timer disposed on its way (from another
    /// thread, queued) is skipped and counted.
    @inline(__always)
    func file(_ core: LoopCore, _ timer: LoopTimer) {
        if timer.isDisposed {
            core.reporter.disposedBeforeRun()
        } else {
            state.value.insert(timer)
        }
    }

    /// A disposed timer leaves the store, if it is there (it may have fired, or been skipped).
    @inline(__always)
    func remove(_ core: LoopCore, _ timer: LoopTimer) {
        if state.value.remove(timer) { core.reporter.disposedBeforeRun() }
    }

    // MARK: Wake

    /// The driver fired: nothing is armed any more.
    func driverFired() {
        state.value.driverFired()
    }

    /// The wall clock was stepped: the next arming starts from the new reading.
    func wallClockChanged() {
        state.value.wallClockChanged()
    }

    /// Arms the driver, then publishes the promise that lets timers and cancellations from other
    /// threads skip the wake-up (``RemoteQueue``). Items that arrived without one while the loop
    /// was awake are filed first and the arming redone, so the promise covers everything queued;
    /// if other threads keep winning that race, the loop stays awake and runs again instead of
    /// blocking.
    func armAndPromise(_ core: LoopCore, now: Int64) {
        var now = now
        // Items waited for this look without a wake-up: look again soon while they keep coming.
        let flush = core.runner.takeFlushRequest()
        for _ in 0..<LoopCore.promiseAttempts {
            let flushBy = flush ? Nanoseconds.adding(now, LoopCore.flushInterval) : nil
            switch state.value.nextWake(monotonicNow: now, wallNow: core.wallNow(), flushBy: flushBy) {
            case .keep: break
            case .runNow:
                // Not blocking: the idle callback takes the queue, so the loop stays awake.
                core.handles.startIdle()
                return
            case .arm(let nanoseconds): core.handles.arm(in: nanoseconds)
            }
            // With `flushBy`, the arming is at or before it (`nextWake`).
            let promise = RemoteQueue.LoopPromise(
                armedDeadline: state.value.armedDeadline ?? .max,
                isFlushing: flushBy != nil
            )
            guard core.runner.fileDeferred(core, takenBy: { core.remote.publish(promise, orTakeInto: &$0) }) else {
                return
            }
            // Filing took time: arming from the old reading would fire late.
            now = core.monotonicNow()
        }
        core.handles.startIdle()
    }

    // MARK: Fire

    /// Fires every timer due by the clocks read once now, in `(deadline, sequence)` order. Entries
    /// inserted during this pass (a periodic timer re-armed, a zero-delay timer scheduled by a
    /// timer) wait for the next pass, so a timer that keeps re-arming cannot starve the others.
    /// Each timer is popped before it runs: no access to the store is open while user code runs.
    func fireDue(_ core: LoopCore) -> Bool {
        // Once shutdown began no timer starts, due or not: shutdown disposes them all.
        guard core.lifecycle.isOpen else { return false }
        let limit = state.value.nextSequence
        var fired = 0
        if state.value.hasMonotonicTimers {
            let now = core.monotonicNow()
            while core.lifecycle.isOpen, var due = state.value.popDue(monotonicNow: now, limit: limit) {
                fire(core, due.timer, lateness: due.lateness, wallLateness: nil)
                core.recycler.recycle(&due.timer)
                fired += 1
            }
        }
        if state.value.hasWallTimers {
            let now = core.wallNow()
            while core.lifecycle.isOpen, var due = state.value.popDueWall(wallNow: now, limit: limit) {
                fire(core, due.timer, lateness: due.lateness, wallLateness: due.lateness)
                core.recycler.recycle(&due.timer)
                fired += 1
            }
        }
        core.recycler.noteRound(fired)
        return fired > 0
    }

    /// Runs one popped timer, unless it was disposed first; a periodic timer that stays active goes
    /// back into the store at its next grid point.
    private func fire(_ core: LoopCore, _ timer: LoopTimer, lateness: Int64, wallLateness: Int64?) {
        guard timer.isPeriodic else {
            guard ActionLifecycle.claimRun(timer.state) else {
                core.reporter.disposedBeforeRun()
                return
            }
            let action = timer.action.take()
            core.reporter.timerFired(lateness: lateness)
            if let action { action() } else { timer.fireHandler() }
            return
        }
        let periodic = unsafeDowncast(timer, to: PeriodicLoopTimer.self)
        guard ActionLifecycle.claimTick(periodic.state) else {
            core.reporter.disposedBeforeRun()
            return
        }
        if let wallLateness {
            LoopTimerStore.moveToMonotonicGrid(periodic, wallLateness: wallLateness, monotonicNow: core.monotonicNow())
        }
        core.reporter.timerFired(lateness: lateness)
        periodic.tick?(periodic.ticks.missed)
        if ActionLifecycle.endTick(periodic.state) {
            // Also when shutdown began during the tick: the final drain disposes it with the rest.
            state.value.reinsertAfterTick(periodic, monotonicNow: core.monotonicNow())
        } else {
            periodic.releaseAction()
        }
    }

    // MARK: Shutdown and memory

    /// Shutdown: every pending timer is disposed and never runs; whoever awaits a handler timer
    /// hears that the scheduler cancelled it.
    func disposeAll(_ core: LoopCore) {
        for timer in state.value.removeAll() where ActionLifecycle.dispose(timer.state) == .wasPending {
            timer.cancelledByScheduler()
            timer.releaseAction()
            core.reporter.disposedBeforeRun()
        }
    }

    /// Shrinks the store if nothing is due soon; returns whether the loop is quiet (see
    /// ``LoopTimerStore/giveBackMemory(monotonicNow:wallNow:)``).
    func giveBackMemory(_ core: LoopCore, now: Int64) -> Bool {
        state.value.giveBackMemory(monotonicNow: now, wallNow: core.wallNow())
    }
}
