import Dispatch
import Scheduling
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// How a LoopScheduler's loop is run.
package enum LoopMode {
    /// Its own named thread.
    case ownThread
    /// The thread that called `LoopScheduler.run(name:_:)`.
    case callerThread
    /// A host's loop, which the host runs.
    case adopted
}

/// The engine behind a LoopScheduler: owned by the loop, held by the public object.
///
/// Loop-confined state (queues, heaps, statistics counters, flags) is touched only on the loop
/// thread, which `isOnLoopThread` tells; other threads reach the engine only through the
/// `RemoteQueue` (a mutex), atomics and `let`s.
// Safe as described above: every loop-confined member is used on the loop thread only.
final class LoopCore: @unchecked Sendable {
    let name: String
    let mode: LoopMode
    let clock: any SchedulerClock
    private(set) var handles: UVHandles!
    let remote = RemoteQueue()
    let thread: LoopThread?
    /// Whether `schedule` calls on the loop thread are accepted; false once shutdown began.
    let accepting = Atomic<Bool>(true)
    private let loopThreadID = Atomic<UInt>(0)
    /// Left once the loop is closed: every handle closed and, for an owned loop, `uv_loop_close`
    /// returned 0.
    private let closedSignal = DispatchGroup()
    let published = PublishedStatistics()

    /// The public object, made current around every batch. Weak: dropping the last reference to the
    /// public object is what shuts the loop down.
    weak var scheduler: LoopScheduler?

    // Loop-confined. Only the loop thread touches these, and never in overlapping accesses, so
    // the runtime's exclusivity bookkeeping (a thread-local look-up per access, measured at 6% of
    // the loop's time) is switched off for them.
    @exclusivity(unchecked) private var localTasks: [LoopWork] = []
    @exclusivity(unchecked) private var spareTasks: [LoopWork] = []
    @exclusivity(unchecked) private var batch = RemoteQueue.Batch()
    // Shrunk from the prepare callback only when nothing is due soon (see `giveBackMemory`).
    @exclusivity(unchecked) private var timers = IndexedHeap<LoopTimer>(shrinksOnRemoval: false)
    @exclusivity(unchecked) private var wallTimers = IndexedHeap<LoopTimer>(shrinksOnRemoval: false)
    @exclusivity(unchecked) private var nextSequence: UInt64 = 0
    @exclusivity(unchecked) private var armedDeadline: Int64?
    @exclusivity(unchecked) private var isRunningWork = false
    @exclusivity(unchecked) private var shutdownRequested = false
    @exclusivity(unchecked) private var finalShutdownStarted = false
    @exclusivity(unchecked) var droppedOnLoopThread = false
    @exclusivity(unchecked) private var stats = LocalStatistics()
    /// Whether `clock` is the system's: then the hot paths read the clock directly rather than
    /// through the existential.
    private let usesSystemClock: Bool

    /// The most batch rounds one callback runs before letting the loop poll for I/O again.
    private static let roundsPerCallback = 64

    init(
        name: String, mode: LoopMode, adopting loop: UnsafeMutableRawPointer?, clock: any SchedulerClock,
        driver: TimerDriverKind
    ) throws {
        self.name = name
        self.mode = mode
        self.clock = clock
        self.usesSystemClock = clock is SystemClock
        self.thread = mode == .ownThread ? LoopThread() : nil
        closedSignal.enter()
        do {
            handles = try UVHandles(adopting: loop, core: self, driver: driver)
        } catch {
            closedSignal.leave()
            throw error
        }
        // A host adopting its loop creates the scheduler on the loop's thread (documented); the
        // caller-thread mode runs the loop right here.
        if mode != .ownThread { noteLoopThread() }
    }

    // MARK: Threads

    var isOnLoopThread: Bool {
        loopThreadID.load(ordering: .relaxed) == UInt(bitPattern: Int(bitPattern: pthread_self()))
    }

    private func noteLoopThread() {
        let me = UInt(bitPattern: Int(bitPattern: pthread_self()))
        if loopThreadID.load(ordering: .relaxed) != me { loopThreadID.store(me, ordering: .relaxed) }
    }

    /// Starts the own thread (own-thread mode).
    func startThread() throws {
        guard let thread else { return }
        try thread.start(name: name) { [self] in
            noteLoopThread()
            runLoopToCompletion()
            if droppedOnLoopThread { thread.detachSelf() }
        }
    }

    /// Runs an owned loop until shutdown closed every handle, then closes the loop.
    func runLoopToCompletion() {
        handles.run()
        handles.closeLoop()
        closedSignal.leave()
    }

    // MARK: Clocks

    @inline(__always)
    func monotonicNow() -> Int64 {
        usesSystemClock ? Nanoseconds.monotonicNow() : clock.monotonicNow()
    }

    @inline(__always)
    func wallNow() -> Int64 {
        usesSystemClock ? Nanoseconds.wallNow() : clock.wallNow()
    }

    // MARK: Submitting work

    func schedule(_ action: @escaping @Sendable () -> Void) -> any Disposable {
        let entry = LoopWork(core: self, action: action)
        if isOnLoopThread {
            guard accepting.load(ordering: .relaxed) else { return Disposables.disposed }
            localTasks.append(entry)
            if !isRunningWork { handles.startIdle() }
            return entry
        }
        return submitRemote(entry)
    }

    func scheduleTimer(_ entry: LoopTimer) -> any Disposable {
        if isOnLoopThread {
            guard accepting.load(ordering: .relaxed) else {
                entry.releaseAction()
                return Disposables.disposed
            }
            insertTimer(entry)
            return entry
        }
        return submitRemote(entry)
    }

    private func submitRemote(_ entry: LoopWork) -> any Disposable {
        switch remote.submit(entry) {
        case .refused:
            entry.releaseAction()
            return Disposables.disposed
        case .accepted:
            return entry
        case .acceptedWake:
            handles.wake()
            remote.wakeDone()
            return entry
        }
    }

    /// Called by an entry's `dispose()` when it won the entry away from `pending` (the closure is
    /// already released): frees a timer's heap slot now on the loop thread, or asks the loop to.
    /// Tasks stay queued, closure-less, until the loop passes them.
    func entryDisposed(_ work: LoopWork) {
        guard work.isTimer else { return }
        let entry = unsafeDowncast(work, to: LoopTimer.self)
        if isOnLoopThread {
            if entry.heapIndex >= 0 {
                removeTimer(entry)
                stats.disposedBeforeRun += 1
            }
            return
        }
        if case .acceptedWake = remote.cancel(entry) {
            handles.wake()
            remote.wakeDone()
        }
    }

    // MARK: Timers (loop thread)

    private func insertTimer(_ entry: LoopTimer) {
        entry.sequence = nextSequence
        nextSequence &+= 1
        if entry.isWall { wallTimers.insert(entry) } else { timers.insert(entry) }
    }

    private func removeTimer(_ entry: LoopTimer) {
        if entry.isWall { wallTimers.remove(entry) } else { timers.remove(entry) }
    }

    /// Fires every timer due by the clocks read once now. Entries inserted during this pass (a
    /// periodic timer re-armed, a zero-delay timer scheduled by a timer) wait for the next pass, so
    /// a timer that keeps re-arming itself cannot starve the others (libuv#4245).
    private func fireDueTimers() -> Bool {
        // Once shutdown began no timer starts, due or not: shutdown disposes them all.
        guard accepting.load(ordering: .relaxed) else { return false }
        let limit = nextSequence
        var fired = false
        if let first = timers.firstKey {
            let now = monotonicNow()
            if first.deadline <= now {
                while let key = timers.firstKey, key.deadline <= now, key.sequence < limit,
                    accepting.load(ordering: .relaxed)
                {
                    let top = timers.removeFirst()!
                    fire(top, lateness: Nanoseconds.subtracting(now, key.deadline), wallLateness: nil)
                    fired = true
                }
            }
        }
        if let first = wallTimers.firstKey {
            let now = wallNow()
            if first.deadline <= now {
                while let key = wallTimers.firstKey, key.deadline <= now, key.sequence < limit,
                    accepting.load(ordering: .relaxed)
                {
                    let top = wallTimers.removeFirst()!
                    let lateness = Nanoseconds.subtracting(now, key.deadline)
                    fire(top, lateness: lateness, wallLateness: lateness)
                    fired = true
                }
            }
        }
        return fired
    }

    private func fire(_ entry: LoopTimer, lateness: Int64, wallLateness: Int64?) {
        guard entry.isPeriodic else {
            guard ActionLifecycle.claimRun(entry.state) else {
                stats.disposedBeforeRun += 1
                return
            }
            let action = entry.action.take()
            stats.recordFire(lateness: lateness)
            action?()
            return
        }
        let periodic = unsafeDowncast(entry, to: PeriodicLoopTimer.self)
        guard ActionLifecycle.claimTick(periodic.state) else {
            stats.disposedBeforeRun += 1
            return
        }
        if let wallLateness {
            // The first tick of an `at:` periodic timer: from here on the grid is monotonic.
            periodic.origin = Nanoseconds.subtracting(monotonicNow(), wallLateness)
            periodic.isWall = false
        }
        stats.recordFire(lateness: lateness)
        periodic.tick?(periodic.missedTicks)
        if ActionLifecycle.endTick(periodic.state) {
            periodic.advance(after: monotonicNow())
            insertTimer(periodic)
        } else {
            periodic.releaseAction()
        }
    }

    /// Arms the driver for the earliest deadline, unless it is already armed no later than that.
    ///
    /// Cancelling the first timer does not disarm (a cancel-heavy server would pay a syscall per
    /// cancel): the driver fires once for nothing and is re-armed then. The first timer's leeway
    /// delays the wake-up, but never past the deadline of any other timer (`secondDeadline`).
    /// Wall-clock timers are converted to the monotonic clock, re-checked at least once a second.
    private func armDriver() {
        var target = Nanoseconds.never
        if let first = timers.first, first.deadline != Nanoseconds.never {
            target = first.deadline
            let leeway = first.leeway
            if leeway > 0 {
                target = min(Nanoseconds.adding(first.deadline, leeway), timers.secondDeadline ?? .max)
            }
        }
        var now: Int64?
        if let first = wallTimers.first, first.deadline != Nanoseconds.never {
            let monotonicNow = self.monotonicNow()
            now = monotonicNow
            let remaining = min(Nanoseconds.subtracting(first.deadline, wallNow()), 1_000_000_000)
            target = min(target, Nanoseconds.adding(monotonicNow, remaining))
        }
        guard target != Nanoseconds.never else { return }
        let monotonicNow = now ?? self.monotonicNow()
        if target <= monotonicNow {
            handles.startIdle()
            return
        }
        if let armedDeadline, armedDeadline <= target { return }
        handles.arm(in: target - monotonicNow)
        armedDeadline = target
    }

    // MARK: Running work (loop thread)

    /// Runs or files what other threads queued, in their order: tasks run right from the batch
    /// (no copy into the local queue), timers go into their heap, and timers disposed off the loop
    /// leave it now.
    private func runRemoteBatch() -> Bool {
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
    private func run(_ entry: LoopWork) {
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
    private func runLocalTasks() -> Bool {
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
    private func runPendingWork() {
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

    /// Shrinks sparse heaps when no timer is due within 50 ms: freeing a big array can stall the
    /// allocator for milliseconds after a burst, which must not land in front of a due timer. A
    /// heap emptied by cancelling (the common case) shrinks in the very next iteration.
    private func giveBackMemory() {
        let quiet: Int64 = 50_000_000
        let now = monotonicNow()
        var soonest = timers.firstKey?.deadline ?? .max
        if let wall = wallTimers.firstKey {
            soonest = min(soonest, Nanoseconds.adding(now, Nanoseconds.subtracting(wall.deadline, wallNow())))
        }
        guard Nanoseconds.subtracting(soonest, now) >= quiet else { return }
        timers.shrinkIfSparse()
        wallTimers.shrinkIfSparse()
    }

    /// The wall clock was stepped: re-arm from the new reading and fire what is now due.
    func wallClockChanged() {
        armedDeadline = nil
        runPendingWork()
    }

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
    private func finalShutdown() {
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

    private func publishStatistics() {
        stats.timersPending = timers.count + wallTimers.count
        published.publish(stats)
    }
}
