@_spi(SchedulerEngine) import Scheduling

/// A loop's timers on its thread: the one way into and out of the ``DeadlineStore``, the driver
/// armed before the loop blocks, and the firing of what is due. (The store holds the arithmetic and
/// is tested without a loop; this part connects it to the loop.)
///
/// A timer's path. The timer-specific steps are this type's; the engine hands it the entries (the
/// core's submit path, the batch runner's take of the remote queue) and the driver's callback
/// (``UVHandles``) starts the batch that fires them:
///
/// 1. **Schedule.** `LoopScheduler.schedule(after:)` makes the entry (``LoopEntryRecycler``) and
///    submits it: on the loop thread it is filed at once (``LoopCore/scheduleTimer(_:)`` in a
///    batch, ``fileOnLoopThread(_:_:fileDeferredFirst:)`` outside one); from another thread it
///    goes through the ``RemoteQueue``, which wakes the loop only if the loop's armed promise does
///    not cover it, and the batch runner files it when it takes the queue (raising
///    ``flushSoon()`` if it had waited).
/// 2. **File.** ``file(_:_:)``, the only insertion: the store stamps its sequence number.
/// 3. **Wake.** Before the loop blocks, ``armAndPromise(_:now:)`` arms the driver for the store's
///    ``DeadlineStore/nextWake(monotonicNow:wallNow:flushBy:)``, files what arrived without a
///    wake-up (its own take of the queue, ``fileDeferred(_:takenBy:)``) and publishes the promise.
/// 4. **Re-arm.** `rearm(after:)` on the entry (``LoopCore/rearm(_:to:)``): on the loop thread the
///    store moves it (``rearm(_:_:to:)``); from another thread the deadline is written in the entry
///    and, when the loop must file it again, queued (``LoopItem/rearmed(_:)``, filed by
///    ``reposition(_:_:)``). The protocol, and why the loop never waits in it: Docs/Design.md §4.13.
/// 5. **Fire or cancel.** The driver's callback calls ``LoopCore/timerFired()``, whose batch runs
///    ``fireDue(_:)``: each due one-shot timer is claimed and its deadline read once more (moved
///    later: filed again with its sequence; being re-armed on another thread: parked until that
///    re-arm queues it), then run. A disposed timer leaves through ``remove(_:_:)``, at once on the
///    loop thread, or when the loop next takes its queue.
package final class TimerDriver {
    /// The store and what the filing of deferred items needs, confined together.
    package struct State: ~Copyable {
        var store = DeadlineStore()
        /// The buffer a take of deferred items swaps with the remote queue's (timers and
        /// cancellations left without a wake-up), kept so steady filing does not allocate.
        var deferred: [LoopItem] = []
        /// The loop took items that had waited without a wake-up while it was armed: its next
        /// arming looks at the queue again within ``LoopCore/flushInterval``.
        var flushSoon = false
    }

    // Loop-confined, never across user code (see LoopConfined).
    @exclusivity(unchecked) private var state: LoopConfined<State>

    init(loopThread: LoopThreadIdentity) {
        state = LoopConfined(State(), loopThread: loopThread)
    }

    var count: Int { state.value.store.count }
    /// The monotonic time the driver is armed for: for the tests.
    var armedDeadline: Int64? { state.value.store.armedDeadline }
    /// Slots the store holds allocated: for the memory tests.
    var slotCapacity: Int { state.value.store.slotCapacity }
    /// The deferred items' buffer's capacity: for the memory tests.
    var deferredCapacity: Int { state.value.deferred.capacity }

    // MARK: File and remove

    /// Files a timer: the one insertion into the store. A timer disposed on its way (from another
    /// thread, queued) is skipped and counted.
    @inline(__always)
    func file(_ core: LoopCore, _ timer: LoopTimer) {
        if timer.isDisposed {
            core.reporter.disposedBeforeRun()
        } else {
            state.value.store.insert(timer)
        }
    }

    /// A timer scheduled on the loop thread through the submit path. Outside a batch (a host's
    /// callback, `run`'s body: `fileDeferredFirst`), timers queued earlier without a wake-up are
    /// filed first, so equal deadlines keep their scheduling order, as when the wake-up made the
    /// loop take them at once.
    @inline(__always)
    func fileOnLoopThread(_ core: LoopCore, _ timer: LoopTimer, fileDeferredFirst: Bool) {
        // The queue's lock only when something may wait there: a channel handler's schedule on a
        // SwiftNIO loop is always outside a batch, and takes no lock then. A submission that
        // happened before this call is seen (the hint is written under the lock, read acquiring);
        // one racing it has no order with it to keep.
        if fileDeferredFirst && core.remote.mayHaveItems {
            _ = fileDeferred(core, takenBy: { core.remote.takeDeferred(into: &$0) })
        }
        file(core, timer)
        if fileDeferredFirst { armSoonIfEarlier(core, timer) }
    }

    /// Outside a batch on a loop whose driver does not prepare before every block (SwiftNIO's): a
    /// timer due before the armed wake-up (or any wall-clock one) asks for a batch, whose end arms
    /// again. (A libuv loop's prepare callback arms before it blocks anyway.)
    @inline(__always)
    private func armSoonIfEarlier(_ core: LoopCore, _ timer: LoopTimer) {
        guard !core.preparesBeforeEveryBlock else { return }
        if timer.isWall || timer.deadlineBeforePublication < state.value.store.armedDeadline ?? .max {
            core.driver.startIdle()
        }
    }

    /// A disposed timer leaves the store, if it is there (it may have fired, or been skipped).
    @inline(__always)
    func remove(_ core: LoopCore, _ timer: LoopTimer) {
        guard state.value.store.remove(timer) else { return }
        core.reporter.disposedBeforeRun()
        // Outside a batch, a driver with no prepare hook hears the store went empty (a batch's end
        // tells it anyway, when it arms).
        if !core.preparesBeforeEveryBlock, state.value.store.count == 0, !core.runner.inBatch {
            core.driver.timersEmptied()
        }
    }

    /// A re-arm on the loop thread: the store moves the timer (lazily when later and in the wheel),
    /// or, not filed yet, the timer takes the deadline it will be filed by.
    @inline(__always)
    func rearm(_ core: LoopCore, _ timer: LoopTimer, to deadline: Int64) {
        state.value.store.rearm(timer, to: deadline)
        if !core.runner.inBatch { armSoonIfEarlier(core, timer) }
    }

    /// A re-arm from another thread moved the timer earlier: it is filed again now by the deadline
    /// it has, if it is still waiting in the store.
    @inline(__always)
    func reposition(_ core: LoopCore, _ timer: LoopTimer) {
        guard !timer.isDisposed else { return }
        state.value.store.reposition(timer)
    }

    /// A take of the remote queue found items that had waited without a wake-up while the loop was
    /// armed: the next arming looks at the queue again soon (see ``RemoteQueue``).
    func flushSoon() {
        state.value.flushSoon = true
    }

    // MARK: Wake

    /// The driver fired: nothing is armed any more.
    func driverFired() {
        state.value.store.driverFired()
    }

    /// The wall clock was stepped: the next arming starts from the new reading.
    func wallClockChanged() {
        state.value.store.wallClockChanged()
    }

    /// Arms the driver, then publishes the promise that lets timers and cancellations from other
    /// threads skip the wake-up (``RemoteQueue``). Items that arrived without one while the loop
    /// was awake are filed first and the arming redone, so the promise covers everything queued;
    /// if other threads keep winning that race, the loop stays awake and runs again instead of
    /// blocking.
    func armAndPromise(_ core: LoopCore, now: Int64) {
        var now = now
        // Items waited for this look without a wake-up: look again soon while they keep coming.
        let flush = state.value.flushSoon
        state.value.flushSoon = false
        for _ in 0..<LoopCore.promiseAttempts {
            let flushBy = flush ? Nanoseconds.adding(now, LoopCore.flushInterval) : nil
            switch state.value.store.nextWake(monotonicNow: now, wallNow: core.wallNow(), flushBy: flushBy) {
            case .keep: break
            case .runNow:
                // Not blocking: the idle callback takes the queue, so the loop stays awake.
                core.driver.startIdle()
                return
            case .arm(let nanoseconds): core.driver.arm(in: nanoseconds)
            }
            // With `flushBy`, the arming is at or before it (`nextWake`).
            let promise = LoopPromise(
                armedDeadline: state.value.store.armedDeadline ?? .max,
                isFlushing: flushBy != nil
            )
            guard fileDeferred(core, takenBy: { core.remote.publish(promise, orTakeInto: &$0) }) else {
                return
            }
            // Filing took time: arming from the old reading would fire late.
            now = core.monotonicNow()
        }
        core.driver.startIdle()
    }

    /// Hands the spare buffer to `take` (one of the remote queue's takes of what waited without a
    /// wake-up) and files what it took: only timers and cancellations are ever queued so, which
    /// run no user code. Returns whether it took anything.
    private func fileDeferred(_ core: LoopCore, takenBy take: (inout [LoopItem]) -> Bool) -> Bool {
        var items: [LoopItem] = []
        swap(&items, &state.value.deferred)
        let took = take(&items)
        if took {
            core.recycler.noteRound(items.count)
            for item in items {
                switch item {
                case .timer(let timer): file(core, timer)
                case .cancelled(let timer): remove(core, timer)
                case .rearmed(let timer): reposition(core, timer)
                case .task, .taskJob, .actorJob:
                    preconditionFailure("TimerDriver.fileDeferred: a task or job was queued without waking the loop")
                }
            }
            // A take may hand over the remote queue's big buffer from a burst: not kept.
            items.removeAll(keepingCapacity: items.capacity <= 65_536)
        }
        state.value.deferred = items
        return took
    }

    // MARK: Fire

    /// Fires every timer due by the clocks read once now, in `(deadline, sequence)` order. Entries
    /// inserted during this pass (a periodic timer re-armed, a zero-delay timer scheduled by a
    /// timer) wait for the next pass, so a timer that keeps re-arming cannot starve the others.
    /// Each timer is popped before it runs: no access to the store is open while user code runs.
    func fireDue(_ core: LoopCore) -> Bool {
        // Once shutdown began no timer starts, due or not: shutdown disposes them all.
        guard core.lifecycle.isOpen else { return false }
        let limit = state.value.store.nextSequence
        var fired = 0
        if state.value.store.hasMonotonicTimers {
            let now = core.monotonicNow()
            while core.lifecycle.isOpen, var due = state.value.store.popDue(monotonicNow: now, limit: limit) {
                guard fire(core, due.timer, due.sequence, now: now, lateness: due.lateness, wallLateness: nil) else { continue }
                core.recycler.recycle(&due.timer)
                fired += 1
            }
        }
        if state.value.store.hasWallTimers {
            let now = core.wallNow()
            while core.lifecycle.isOpen, var due = state.value.store.popDueWall(wallNow: now, limit: limit) {
                guard fire(core, due.timer, due.sequence, now: now, lateness: due.lateness, wallLateness: due.lateness)
                else { continue }
                core.recycler.recycle(&due.timer)
                fired += 1
            }
        }
        core.recycler.noteRound(fired)
        return fired > 0
    }

    /// Runs one popped timer, unless it was disposed first; a periodic timer that stays active goes
    /// back into the store at its next grid point. A one-shot timer whose deadline a re-arm on
    /// another thread moved later than the key it was popped by goes back into the store with its
    /// sequence instead (returns false: it did not fire, or not yet in this pass).
    private func fire(
        _ core: LoopCore,
        _ timer: LoopTimer,
        _ sequence: UInt64,
        now: Int64,
        lateness: Int64,
        wallLateness: Int64?
    ) -> Bool {
        guard timer.isPeriodic else {
            switch ActionLifecycle.beginClaim(timer.state) {
            case .claimed: break
            case .leftToRearm:
                // Another thread is writing its deadline: filed where it cannot come due, until that
                // re-arm queues it to be filed again (never waiting for it: Design.md §4.13).
                state.value.store.park(timer, sequence: sequence)
                return false
            case .notPending:
                core.reporter.disposedBeforeRun()
                return true
            }
            // Claimed, so no re-arm can write the deadline now: this read is its last word. Moved
            // later than the key it was popped by (a re-arm from another thread, written in place),
            // it goes back in with its sequence, by its deadline: if that is due too, it comes out
            // again in this pass, in its deadline's order among the timers due (rule 3).
            let deadline = timer.deadline
            guard deadline <= Nanoseconds.subtracting(now, lateness) else {
                if ActionLifecycle.abortClaim(timer.state) {
                    state.value.store.refile(timer, sequence: sequence)
                } else {
                    core.reporter.disposedBeforeRun()
                }
                return false
            }
            // Disposed during the claim: the disposer released the closure; it never runs.
            guard ActionLifecycle.commitClaim(timer.state) else {
                core.reporter.disposedBeforeRun()
                return true
            }
            let action = timer.action.take()
            // An earlier deadline from another thread may not be filed yet: lateness is the live one's.
            core.reporter.timerFired(lateness: Nanoseconds.subtracting(now, deadline))
            if let action { action() } else { timer.fireHandler() }
            return true
        }
        let periodic = unsafeDowncast(timer, to: PeriodicLoopTimer.self)
        guard ActionLifecycle.claimTick(periodic.state) else {
            core.reporter.disposedBeforeRun()
            return true
        }
        if let wallLateness {
            DeadlineStore.moveToMonotonicGrid(periodic, wallLateness: wallLateness, monotonicNow: core.monotonicNow())
        }
        core.reporter.timerFired(lateness: lateness)
        periodic.tick?(periodic.ticks.missed)
        if ActionLifecycle.endTick(periodic.state) {
            // Also when shutdown began during the tick: the final drain disposes it with the rest.
            state.value.store.reinsertAfterTick(periodic, monotonicNow: core.monotonicNow())
        } else {
            periodic.releaseAction()
        }
        return true
    }

    // MARK: Shutdown and memory

    /// Shutdown: every pending timer is disposed and never runs; whoever awaits a handler timer
    /// hears that the scheduler cancelled it. (With the `ExperimentalExecutors` trait, a wake job's
    /// entry hears it too, and hands its job to Dispatch with its deadline: `WakeJobLoopTimer`.)
    func disposeAll(_ core: LoopCore) {
        for timer in state.value.store.removeAll() where ActionLifecycle.dispose(timer.state) == .wasPending {
            timer.cancelledByScheduler()
            timer.releaseAction()
            core.reporter.disposedBeforeRun()
        }
    }

    /// Shrinks the store if nothing is due soon; returns whether the loop is quiet (see
    /// ``DeadlineStore/giveBackMemory(monotonicNow:wallNow:)``), and then gives back a deferred
    /// buffer far beyond the iteration's demand (see ``LoopEntryRecycler/keep``).
    func giveBackMemory(_ core: LoopCore, now: Int64) -> Bool {
        guard state.value.store.giveBackMemory(monotonicNow: now, wallNow: core.wallNow()) else { return false }
        if state.value.deferred.capacity > core.recycler.keep { state.value.deferred = [] }
        return true
    }
}
