import Scheduling
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// How a LoopScheduler's loop is run.
package enum LoopMode: Sendable {
    /// Its own named thread.
    case ownThread
    /// The thread that called `LoopScheduler.run(name:_:)`.
    case callerThread
    /// A host's loop, which the host runs.
    case adopted
}

/// What only the loop thread touches: the queues, the timer store, the statistics, and whether
/// the loop is inside a batch of work. Reached only through ``LoopCore/confined``, which asserts
/// the loop thread in debug builds.
struct LoopConfined {
    /// Tasks and jobs scheduled from the loop thread, run in the same iteration.
    var localItems: [LoopItem] = []
    /// The emptied buffer of the previous round, reused so steady-state work does not allocate.
    var spareItems: [LoopItem] = []
    /// The remote queue's items, swapped out once per round.
    var batch: [LoopItem] = []
    var timers = LoopTimerStore()
    /// Entries whose run ended while only the loop held them (the caller had dropped its
    /// disposable, as most do): reused by the next `schedule` on the loop thread instead of a
    /// `malloc` and a `free` per action. At most ``LoopCore/recycleLimit`` of each.
    var spareTasks: [LoopWork] = []
    var spareTimers: [LoopTimer] = []
    /// The capacity of the buffer last handed to the remote queue (it alternates with `batch`),
    /// so a quiet loop takes the queue's lock only when that buffer is worth giving back.
    var remoteCapacity = 0
    /// The most entries one round handled (remote items, local items or fired timers) since the
    /// last prepare: the demand the buffers and spare lists serve (see `giveBackMemory()`).
    var busiestRound = 0
    var stats = LocalStatistics()
    /// Per-iteration counts for the metrics delegate; untouched without one.
    var iteration = IterationCounters()
    /// The loop took items that had waited without a wake-up while it was armed: its next
    /// arming looks at the queue again within ``LoopCore/flushInterval``.
    var flushSoon = false
    /// Inside a batch of user work: a `shutdown()` from an action completes after the batch, and
    /// `schedule` from outside a batch (a host callback, `run`'s body) must start the idle handle.
    var inBatch = false
}

/// The engine behind a LoopScheduler: owned by the loop, held by the public object.
///
/// Threads: loop-confined state lives in ``confined`` (asserted in debug builds); other threads
/// reach the engine only through the ``RemoteQueue`` (a lock), the ``LoopLifecycle`` (an atomic),
/// the published statistics (atomics) and `let`s.
// Safe as described above: `confined` is touched on the loop thread only, and checked there.
final class LoopCore: @unchecked Sendable {
    let name: String
    let mode: LoopMode
    let clock: any ClockSource
    /// Whether `clock` is the system's: then the hot paths read the clock directly rather than
    /// through the existential.
    let usesSystemClock: Bool
    let lifecycle = LoopLifecycle()
    let remote = RemoteQueue()
    let published = PublishedStatistics()
    let thread: LoopThread?
    /// Told about every loop iteration; nil costs nothing.
    let metricsDelegate: (any LoopSchedulerMetricsDelegate)?
    /// The pthread running the loop, as a number; 0 until known (an adopted loop learns it at its
    /// first callback, so scheduling before that goes through the remote queue, locked).
    private let loopThreadID = Atomic<UInt>(0)
    private(set) var handles: UVHandles!
    /// Runs jobs enqueued after the loop closed (Docs/Design.md §8.2): no task is ever stranded.
    let fallback = FallbackExecutor()
    /// The public object as the task executor that task jobs run on, on the loop and on the
    /// fallback queue. Unowned: a task job always has an owner keeping the scheduler alive — the
    /// task's executor preference retains it (`Task(executorPreference:)`), or the caller of
    /// `withTaskExecutorPreference` holds it for the scope.
    /// Kept as the unowned reference a job runs on, so running a job retains nothing (the public
    /// object has a side table for its weak references: a retain there is the slow path).
    var taskExecutor: UnownedTaskExecutor?
    /// The executor of actors pinned to the loop, owned here so it lives as long as anything that
    /// can run its jobs (the loop and the fallback queue both hold the core). Set once in `init`,
    /// before the core is shared with any other thread.
    private(set) var actorExecutor: LoopActorExecutor!
    /// The same, as the unowned reference an actor job runs on.
    private(set) var unownedActorExecutor: UnownedSerialExecutor!

    /// The public object, made current around every batch. Weak: dropping the last reference to
    /// the public object is what shuts the loop down.
    weak var scheduler: LoopScheduler?
    /// The same, as the current-scheduler slot holds it during a batch: weakly, so a user thread
    /// dropping its last reference mid-batch is the one that runs `deinit` and waits.
    let currentBox = WeakSchedulerBox()

    // Loop-confined: only the loop thread touches it, never in overlapping accesses (user code
    // never runs inside an access), so the runtime's exclusivity bookkeeping (a thread-local
    // look-up per access, measured at 6% of the loop's time) is off.
    @exclusivity(unchecked) private var _confined = LoopConfined()

    /// The most batch rounds one callback runs before letting the loop poll for I/O again.
    static let roundsPerCallback = 64
    /// The most spare entries of each kind kept for reuse (64 KiB each).
    static let recycleLimit = 1024
    /// How often the loop files late arrivals and re-arms before it gives up promising and runs
    /// again instead of blocking.
    static let promiseAttempts = 4
    /// The longest a timer or cancellation from another thread waits for the loop to look, while
    /// such items keep coming without wake-ups (``RemoteQueue``): 10 ms, a hundred extra wake-ups a
    /// second at most, against one per item without the promise.
    static let flushInterval: Int64 = 10_000_000
    /// Queue buffers and spare lists with room for at most this many entries are kept even at rest
    /// (512 bytes of buffer, 4 KiB of entries): giving them back would only cost reallocations.
    static let keptAtRest = 64

    /// Sets up the loop's handles, and its thread in own-thread mode. On failure releases exactly
    /// what was acquired (no fd, thread, memory or retain left) and throws.
    init(
        name: String,
        mode: LoopMode,
        adopting loop: UnsafeMutableRawPointer?,
        clock: any ClockSource,
        driver: TimerDriverKind,
        faults: LoopSetUpFaults,
        metricsDelegate: (any LoopSchedulerMetricsDelegate)? = nil
    ) throws {
        self.name = name
        self.metricsDelegate = metricsDelegate
        self.mode = mode
        self.clock = clock
        self.usesSystemClock = clock is SystemClock
        self.thread = mode == .ownThread ? LoopThread() : nil
        actorExecutor = LoopActorExecutor(core: self)
        unownedActorExecutor = actorExecutor.asUnownedSerialExecutor()
        do {
            handles = try UVHandles(adopting: loop, core: self, driver: driver, faults: faults)
        } catch {
            lifecycle.setUpFailed()
            throw error
        }
        // The caller-thread mode runs the loop right here. An adopted loop's thread is learnt at
        // its first callback: a host that creates the scheduler elsewhere stays correct.
        if mode == .callerThread { noteLoopThread() }
        if let thread {
            do {
                try thread.start(name: name, faults: faults) { [self] in
                    noteLoopThread()
                    runLoopToCompletion()
                }
            } catch {
                // No thread will run the loop: release what set-up acquired, here.
                handles.releaseAfterFailedSetUp()
                lifecycle.setUpFailed()
                throw error
            }
        }
        lifecycle.started()
    }

    // MARK: Loop confinement

    /// The loop-confined state. Debug builds stop the program when it is reached off the loop
    /// thread.
    var confined: LoopConfined {
        @inline(__always) _read {
            assertOnLoopThread()
            yield _confined
        }
        @inline(__always) _modify {
            assertOnLoopThread()
            yield &_confined
        }
    }

    @inline(__always)
    func assertOnLoopThread(_ function: StaticString = #function) {
        #if DEBUG
        if !isOnLoopThread {
            fatalError("LoopCore.\(function): loop-confined state of '\(name)' reached off its loop thread")
        }
        #endif
    }

    var isOnLoopThread: Bool {
        loopThreadID.load(ordering: .relaxed) == UInt(bitPattern: Int(bitPattern: pthread_self()))
    }

    /// After the last close callback: no thread is the loop thread any more.
    func forgetLoopThread() {
        loopThreadID.store(0, ordering: .relaxed)
    }

    @inline(__always)
    func noteLoopThread() {
        let me = UInt(bitPattern: Int(bitPattern: pthread_self()))
        if loopThreadID.load(ordering: .relaxed) != me { loopThreadID.store(me, ordering: .relaxed) }
    }

    /// Runs an owned loop until shutdown closed every handle, then closes the loop.
    func runLoopToCompletion() {
        LoopThreadMarker.whileRunning {
            handles.run()
            handles.closeLoop()
        }
        lifecycle.didClose()
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

