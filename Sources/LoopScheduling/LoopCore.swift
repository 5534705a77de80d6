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
    let clock: any ClockSource
    private(set) var handles: UVHandles!
    let remote = RemoteQueue()
    let thread: LoopThread?
    /// Whether `schedule` calls on the loop thread are accepted; false once shutdown began.
    let accepting = Atomic<Bool>(true)
    let loopThreadID = Atomic<UInt>(0)
    /// Left once the loop is closed: every handle closed and, for an owned loop, `uv_loop_close`
    /// returned 0.
    let closedSignal = DispatchGroup()
    let published = PublishedStatistics()

    /// The public object, made current around every batch. Weak: dropping the last reference to the
    /// public object is what shuts the loop down.
    weak var scheduler: LoopScheduler?

    // Loop-confined. Only the loop thread touches these, and never in overlapping accesses, so
    // the runtime's exclusivity bookkeeping (a thread-local look-up per access, measured at 6% of
    // the loop's time) is switched off for them.
    @exclusivity(unchecked) var localTasks: [LoopWork] = []
    @exclusivity(unchecked) var spareTasks: [LoopWork] = []
    @exclusivity(unchecked) var batch = RemoteQueue.Batch()
    // Shrunk from the prepare callback only when nothing is due soon (see `giveBackMemory`).
    @exclusivity(unchecked) var timers = IndexedHeap<LoopTimer>(shrinksOnRemoval: false)
    @exclusivity(unchecked) var wallTimers = IndexedHeap<LoopTimer>(shrinksOnRemoval: false)
    @exclusivity(unchecked) var nextSequence: UInt64 = 0
    @exclusivity(unchecked) var armedDeadline: Int64?
    @exclusivity(unchecked) var isRunningWork = false
    @exclusivity(unchecked) var shutdownRequested = false
    @exclusivity(unchecked) var finalShutdownStarted = false
    @exclusivity(unchecked) var droppedOnLoopThread = false
    @exclusivity(unchecked) var stats = LocalStatistics()
    /// Whether `clock` is the system's: then the hot paths read the clock directly rather than
    /// through the existential.
    let usesSystemClock: Bool

    /// The most batch rounds one callback runs before letting the loop poll for I/O again.
    static let roundsPerCallback = 64

    init(
        name: String,
        mode: LoopMode,
        adopting loop: UnsafeMutableRawPointer?,
        clock: any ClockSource,
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

    func noteLoopThread() {
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

    func submitRemote(_ entry: LoopWork) -> any Disposable {
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

}
