@_spi(SchedulerEngine) import Scheduling
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// How an engine's loop is run.
package enum LoopMode: Sendable {
    /// Its own named thread (`LoopScheduler(name:)`).
    case ownThread
    /// The thread that called `LoopScheduler.run(name:_:)`.
    case callerThread
    /// A host's libuv loop (`LoopScheduler(adopting:)`), run by the host on the thread that
    /// adopted it. The engine marks its thread as a loop thread only around its own batches, and is
    /// closed once its driver closed what it set up.
    case adopted
    /// Another event loop (SwiftNIO's), which runs the engine on its own thread: the driver says
    /// which thread that is (`LoopCore.init`'s `isOnLoopThread`, and ``LoopCore/noteLoopThread()``
    /// once it knows the thread for good). Otherwise as ``adopted``.
    case hosted

    /// Whether someone else runs the loop (the engine marks the thread only around its batches, and
    /// is closed when its driver closed what it set up).
    var isRunByOthers: Bool { self == .adopted || self == .hosted }
}

/// The engine behind a LoopScheduler, and behind a scheduler on a SwiftNIO event loop: owned by the
/// loop, held by the public object. Nothing in it knows libuv or SwiftNIO: the loop that runs it is
/// its ``LoopDriver``.
///
/// The hub that wires its parts together and owns the loop's callbacks and the submit path (the
/// shutdown sequence is ``LoopShutdown``). The parts, each with its own loop-confined state
/// (``LoopConfined``):
///
/// - ``RemoteQueue``: the intake from other threads, the lifecycle and the wake-up, under one lock;
/// - ``LoopBatchRunner``: runs tasks, jobs and due timers in batches;
/// - ``TimerDriver``: files, arms and fires timers (the `Timers` folder);
/// - ``LoopEntryRecycler``: reuses task and timer entries on the loop thread;
/// - ``LoopReporter``: the counters, published and handed to the metrics delegate;
/// - ``LoopDriver``: the loop itself (libuv's handles, a SwiftNIO event loop).
///
/// Threads: loop-confined state lives in the parts (asserted in debug builds); other threads reach
/// the engine only through the ``RemoteQueue`` (a lock and the lifecycle's atomic), the published
/// statistics (atomics) and `let`s.
// Safe as described above.
package final class LoopCore: @unchecked Sendable {
    let name: String
    /// The public type's name, for messages: `LoopScheduler`, `EventLoopScheduler`.
    let typeName: String
    let mode: LoopMode
    let clock: any ClockSource
    /// Whether `clock` is the system's: then the hot paths read the clock directly rather than
    /// through the existential.
    let usesSystemClock: Bool
    let remote = RemoteQueue()
    /// The loop's own thread, which shutdown joins (``LoopMode/ownThread`` only). Set in `init`,
    /// before the core is shared with any other thread.
    private(set) var ownThread: (any LoopOwnThread)?
    /// Which thread is the loop's; the parts check their confinement against it.
    let loopThread: LoopThreadIdentity
    let runner: LoopBatchRunner
    let timers: TimerDriver
    let recycler: LoopEntryRecycler
    let reporter: LoopReporter
    /// The loop that runs the engine. Set in `init`, before the core is shared with any other thread.
    private(set) var driver: (any LoopDriver)!
    /// Whether the driver runs ``prepareFired()`` before every block of its loop (its
    /// `preparesBeforeEveryBlock`, read once). Set in `init`.
    private(set) var preparesBeforeEveryBlock = true
    /// Whether the whole loop thread is this scheduler's isolation (a SwiftNIO event loop, whose
    /// own executor says so), not only its batches (a libuv loop's).
    let isolatesWholeThread: Bool
    /// Runs jobs enqueued after the loop closed (Docs/Design.md §8.2): no task is ever stranded. It makes
    /// its queue only when a job falls back, so a scheduler that never needs it touches no Dispatch.
    let fallback = FallbackExecutor()
    /// The public object as the task executor that task jobs run on, on the loop and on the
    /// fallback queue. Unowned: a task job always has an owner keeping the scheduler alive — the
    /// task's executor preference retains it (`Task(executorPreference:)`), or the caller of
    /// `withTaskExecutorPreference` holds it for the scope. Kept as the unowned reference a job
    /// runs on, so running a job retains nothing (the public object has a side table for its weak
    /// references: a retain there is the slow path).
    var taskExecutor: UnownedTaskExecutor?
    /// The executor of actors pinned to the loop, owned here so it lives as long as anything that
    /// can run its jobs (the loop and the fallback queue both hold the core).
    let actorExecutor = ActorExecutor()
    /// The same, as the unowned reference an actor job runs on. Set in `init`, before the core is
    /// shared with any other thread (or replaced then: ``adoptIdentities(actor:task:)``).
    private(set) var unownedActorExecutor: UnownedSerialExecutor!
    /// The public object as the current-scheduler slot holds it during a batch: weakly, so a user
    /// thread dropping its last reference mid-batch is the one that runs `deinit` and waits, and
    /// dropping it is what shuts the loop down.
    let currentBox = WeakSchedulerBox()
    #if DEBUG
    /// Where a re-arm from another thread may be held between writing its deadline and publishing
    /// it: the tests of the re-arm protocol's back-off (debug builds only).
    let rearmWindow = RearmWindow()
    #endif

    /// How often the loop files late arrivals and re-arms before it gives up promising and runs
    /// again instead of blocking.
    static let promiseAttempts = 4
    /// The longest a timer or cancellation from another thread waits for the loop to look, while
    /// such items keep coming without wake-ups (``RemoteQueue``): 10 ms, a hundred extra wake-ups a
    /// second at most, against one per item without the promise.
    static let flushInterval: Int64 = 10_000_000

    /// Sets up the engine on the loop `makeDriver` makes, and for ``LoopMode/ownThread`` the thread
    /// `startThread` starts to run it. On failure releases exactly what was acquired (no fd, thread,
    /// memory or retain left) and throws.
    ///
    /// - Parameters:
    ///   - observer: told about every loop iteration (a metrics delegate); nil costs nothing.
    ///   - isOnLoopThread: for a loop whose thread varies (a SwiftNIO testing loop), how to tell
    ///     the loop thread; nil for a loop with one thread, recorded when it first runs.
    package init(
        name: String,
        typeName: String = "LoopScheduler",
        mode: LoopMode,
        clock: any ClockSource,
        observer: (any LoopIterationObserver)? = nil,
        isOnLoopThread: (@Sendable () -> Bool)? = nil,
        isolatesWholeThread: Bool = false,
        makeDriver: (LoopCore) throws -> any LoopDriver,
        startThread: ((LoopCore) throws -> any LoopOwnThread)? = nil
    ) throws {
        self.name = name
        self.typeName = typeName
        self.mode = mode
        self.clock = clock
        self.usesSystemClock = clock is SystemClock
        self.isolatesWholeThread = isolatesWholeThread
        let loopThread = LoopThreadIdentity(name: name, isCurrent: isOnLoopThread)
        self.loopThread = loopThread
        self.runner = LoopBatchRunner(loopThread: loopThread)
        self.timers = TimerDriver(loopThread: loopThread)
        self.recycler = LoopEntryRecycler(loopThread: loopThread)
        self.reporter = LoopReporter(delegate: observer, loopThread: loopThread)
        actorExecutor.bind(to: self)
        unownedActorExecutor = actorExecutor.asUnownedSerialExecutor()
        do {
            driver = try makeDriver(self)
        } catch {
            remote.lifecycle.setUpFailed()
            throw error
        }
        remote.setWaker(driver)
        preparesBeforeEveryBlock = driver.preparesBeforeEveryBlock
        // The caller-thread mode runs the loop right here, and an adopted loop runs on the thread
        // that adopted it (documented, and checked at every callback): known from now on, so a
        // `shutdown()` or a last release there, also before the host's first `uv_run`, never waits
        // for itself.
        if mode == .callerThread || mode == .adopted { noteLoopThread() }
        if mode == .ownThread, let startThread {
            do {
                ownThread = try startThread(self)
            } catch {
                // No thread will run the loop: release what set-up acquired, here.
                driver.releaseAfterFailedSetUp()
                remote.lifecycle.setUpFailed()
                throw error
            }
        }
        remote.lifecycle.started()
    }

    /// Runs the loop's jobs as another executor's: actor jobs isolated to `actor` (the main
    /// executor of `LoopExecutorFactory`, whose identity is the main actor's), task jobs with
    /// `task` as their task executor (its default executor). Called once, right after `init`,
    /// before any job is enqueued with these identities (an own thread's loop may be running
    /// already: the remote queue's lock orders its first read of them after this write).
    package func adoptIdentities(actor: UnownedSerialExecutor?, task: UnownedTaskExecutor?) {
        if let actor { unownedActorExecutor = actor }
        if let task { taskExecutor = task }
    }

    /// The lifecycle, which the remote queue owns (its transitions race with submissions).
    package var lifecycle: LoopLifecycle {
        _read { yield remote.lifecycle }
    }

    // MARK: The loop thread

    @inline(__always)
    package func assertOnLoopThread(_ function: StaticString = #function) {
        loopThread.assertCurrent(function)
    }

    package var isOnLoopThread: Bool { loopThread.isCurrent }

    /// Records the calling thread as the loop thread: in `init` for the caller-thread and adopted
    /// modes, first thing on an own thread.
    package func noteLoopThread() {
        loopThread.becomeCurrent()
    }

    /// Every libuv callback: the loop runs on the thread the scheduler knows. Only an adopted loop
    /// can break that — a host that adopted it on one thread and runs it on another — and then
    /// loop-confined state would be shared between two threads: stop, in every build.
    @inline(__always)
    private func checkCallbackThread() {
        if _slowPath(!isOnLoopThread) {
            fatalError(
                "LoopScheduler(adopting:) '\(name)': the loop runs on a thread other than the one that adopted it; "
                    + "create the scheduler on the thread that runs the loop"
            )
        }
    }

    // MARK: The loop's callbacks (from its driver)

    package func asyncFired() {
        checkCallbackThread()
        runPendingWork()
    }

    package func idleFired() {
        checkCallbackThread()
        runPendingWork()
    }

    /// The timer driver fired; the timers' whole path is in the `Timers` folder (``TimerDriver``).
    package func timerFired() {
        checkCallbackThread()
        timers.driverFired()
        runPendingWork()
    }

    /// The armed wake-up will not come (its loop dropped it): the next arming arms again.
    package func armedWakeLost() {
        checkCallbackThread()
        timers.driverFired()
    }

    /// The wall clock was stepped: re-arm from the new reading and fire what is now due.
    package func wallClockChanged() {
        checkCallbackThread()
        timers.wallClockChanged()
        runPendingWork()
    }

    /// A callback's work: a batch while the loop is open; the final drain once shutdown began (here,
    /// from an action of the batch, or elsewhere). Nothing during a batch (a host callback nested
    /// in it cannot happen on a loop, but a `run` body can) or once the intake closed.
    private func runPendingWork() {
        guard !runner.inBatch else { return }
        switch lifecycle.state {
        case .open:
            runner.runBatchOnCallback(self)
            if lifecycle.state == .draining { LoopShutdown.finish(self) } else { publishStatistics() }
        case .draining:
            LoopShutdown.finish(self)
        case .starting, .closing, .closed:
            return
        }
    }

    /// Once per loop iteration, before the loop blocks: give memory back if quiet, arm the timer
    /// driver and tell other threads what it is armed for, publish the counters.
    package func prepareFired() {
        checkCallbackThread()
        guard lifecycle.isOpen else { return }
        reporter.iterationBegan()
        let now = monotonicNow()
        if timers.giveBackMemory(self, now: now) {
            runner.giveBackMemory(self)
            recycler.giveBackMemory()
        }
        recycler.startIteration()
        timers.armAndPromise(self, now: now)
        publishStatistics()
        reporter.iterationEnded(now: now, loopName: name, timersPending: timers.count)
    }

    func publishStatistics() {
        reporter.publish(timersPending: timers.count)
    }

    // MARK: Submitting

    /// Queues a task. Returns the entry, or an already-disposed disposable once shutdown began.
    func schedule(_ action: __owned @escaping @Sendable () -> Void) -> any Disposable {
        // Spare entries are the loop thread's: another thread allocates.
        let entry = isOnLoopThread ? recycler.task(consume action) : LoopWork(action: consume action)
        guard submit(.task(entry)) else { return refuse(entry) }
        return entry
    }

    /// A one-shot timer entry: a recycled one on the loop thread when there is one.
    @inline(__always)
    func makeTimer(deadline: Int64, isWall: Bool, action: __owned @escaping @Sendable () -> Void) -> LoopTimer {
        guard isOnLoopThread else { return LoopTimer(core: self, deadline: deadline, isWall: isWall, action: consume action) }
        return recycler.timer(self, deadline: deadline, isWall: isWall, action: consume action)
    }

    /// Queues a timer for the timer store. The same refusal as ``schedule(_:)``.
    // `__owned`: the caller's +1 (a fresh or recycled entry) becomes the returned disposable,
    // instead of a retain for the return and a release of the caller's reference per schedule.
    func scheduleTimer(_ entry: __owned LoopTimer) -> any Disposable {
        // In a batch on the loop thread, what `submit` does for a timer, without wrapping the
        // entry in a queue item: the store's retain and the returned one are all it costs.
        if isOnLoopThread, runner.inBatch, lifecycle.isOpen {
            timers.file(self, entry)
            return entry
        }
        guard submit(.timer(entry)) else { return refuse(entry) }
        return entry
    }

    /// ``scheduleTimer(_:)`` for a re-armable timer: the entry is the handle, also when refused
    /// (disposed then: a re-arm returns false).
    func scheduleRearmableTimer(_ entry: __owned LoopTimer) -> LoopTimer {
        _ = scheduleTimer(entry)
        return entry
    }

    /// Queues a job: on the loop while it accepts jobs (open or draining), else on the fallback.
    func enqueue(_ item: LoopItem) {
        if !submit(item) { fallback.enqueue(item, core: self) }
    }

    /// Releases a refused entry's closure and reports it disposed (rule 4.9: inert after shutdown).
    /// A refused handler timer hears `timerCancelledByScheduler`, as a pending one does at
    /// shutdown: an `await` on it must never be left suspended.
    private func refuse(_ entry: LoopWork) -> any Disposable {
        _ = ActionLifecycle.dispose(entry.state)
        entry.releaseAction()
        return Disposables.disposed
    }

    private func refuse(_ timer: LoopTimer) -> any Disposable {
        _ = ActionLifecycle.dispose(timer.state)
        timer.cancelledByScheduler()
        timer.releaseAction()
        return Disposables.disposed
    }

    /// The one submit path. On the loop thread a timer is filed at once and a task or job goes
    /// into the loop-local queue (no lock, no wake-up); elsewhere the ``RemoteQueue`` takes it and
    /// decides the wake-up. Returns false if the loop refused it (see ``RemoteQueue/accepts(_:)``).
    @inline(__always)
    func submit(_ item: LoopItem) -> Bool {
        guard isOnLoopThread else { return remote.submit(item) }
        guard remote.accepts(item) else { return false }
        if case .timer(let timer) = item {
            timers.fileOnLoopThread(self, timer, fileDeferredFirst: !runner.inBatch)
        } else {
            runner.enqueueLocal(self, item)
        }
        return true
    }

    /// Called by a timer's `dispose()` when it won the timer away from `pending` (the closure is
    /// already released): the timer leaves the store now on the loop thread, or from another
    /// thread when the loop next looks at its queue — within ``flushInterval``, waking it only to
    /// start flushing (see ``RemoteQueue``) — and never only at its deadline. Refused once shutdown
    /// began: shutdown disposes every timer anyway. (Disposed tasks stay queued, closure-less,
    /// until the loop passes them.)
    func timerDisposed(_ timer: LoopTimer) {
        if isOnLoopThread {
            timers.remove(self, timer)
        } else {
            _ = remote.submit(.cancelled(timer))
        }
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
}
