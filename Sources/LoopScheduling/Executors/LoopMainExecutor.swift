#if compiler(>=6.3) && ExperimentalExecutors && os(Linux)
// The package trait ExperimentalExecutors (off by default): Swift's unsettled executor SPIs, which
// the next toolchain may not compile. Without the trait nothing of this file is compiled.
@_spi(ExperimentalCustomExecutors) import _Concurrency
import CLibUV
import Dispatch
import Foundation
import LoopEngine
@_spi(SchedulerEngine) import Scheduling
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The main executor of ``LoopExecutorFactory``: a loop run on the main thread, whose identity is
/// the main actor's.
///
/// A main-actor job is queued in the loop's FIFO as the job of an actor pinned to the loop, and
/// runs isolated to this executor, so main-actor code calls main-actor code with no hop. Jobs
/// enqueued before ``run()`` (the runtime's first, and those of the main function's synchronous
/// part) wait in the loop's queue and run once it runs. ``stop()`` shuts the loop down: what it
/// accepted runs first, then ``run()`` returns — under the factory the runtime then ends the
/// program, so nothing runs main-actor jobs after that.
///
/// The loop drains Dispatch's main queue too, on the main thread, between its own batches:
/// `DispatchQueue.main` and `Schedulers.main` run there. The main queue's blocks and main-actor
/// jobs are two queues, each in its own order, not one FIFO as under Dispatch's main loop.
// Immutable after `init` but for the loop's own state and an atomic.
final class LoopMainExecutor: MainExecutor, @unchecked Sendable {
    /// The loop on the main thread (caller-thread mode: this is created by the runtime on the main
    /// thread, before `main` runs).
    let loop: LoopScheduler
    /// Dispatch's read source on the main queue's eventfd: each readiness schedules one drain on
    /// the loop. Nil for an executor that does not drain it.
    private let drainSource: (any DispatchSourceRead)?
    private let ran = Atomic<Bool>(false)

    /// A loop on the calling thread, which must be the thread that calls ``run()``. With
    /// `drainsDispatchMainQueue` (the factory's main executor), the loop also runs what Dispatch's
    /// main queue holds, and must be on the main thread; the tests' executors, on threads of their
    /// own, do not drain it.
    init(drainsDispatchMainQueue: Bool) {
        do {
            loop = try LoopScheduler(
                name: "main",
                mode: .callerThread,
                adopting: nil,
                clock: SystemClock(),
                driver: .preferred
            )
        } catch {
            fatalError("LoopExecutorFactory: the main loop cannot be set up: \(error)")
        }
        if drainsDispatchMainQueue {
            precondition(Thread.isMainThread, "LoopExecutorFactory: the main loop drains Dispatch's main queue on the main thread only")
            drainSource = Self.drainDispatchMainQueue(on: loop)
        } else {
            drainSource = nil
        }
        loop.core.adoptIdentities(actor: UnownedSerialExecutor(ordinary: self), task: nil)
    }

    /// Queues a main-actor job on the main loop.
    func enqueue(_ job: consuming ExecutorJob) {
        EnqueueProbe.record(self)
        loop.core.enqueueActorJob(UnownedJob(job))
    }

    /// Runs the main loop on the calling thread (the main thread) until ``stop()``. A second call
    /// stops the program: the loop runs once.
    func run() throws {
        if ran.exchange(true, ordering: .relaxed) {
            fatalError("LoopExecutorFactory: the main executor's run() was called twice; the main loop runs once")
        }
        LibUVEngine.runOwnedLoop(loop.core)
    }

    /// Shuts the main loop down: ``run()`` returns once what it accepted ran.
    func stop() {
        LoopShutdown.begin(loop.core)
    }

    /// True inside the main loop's actions and jobs.
    func isIsolatingCurrentContext() -> Bool? {
        loop.core.isIsolatingItsContext
    }

    /// Stops the program unless the caller runs one of the main loop's actions or jobs.
    func checkIsolated() {
        loop.core.checkIsolated(function: "MainActor (LoopExecutorFactory's main loop)")
    }

    /// Watches libdispatch's main-queue eventfd and drains the main queue on the loop whenever it
    /// has work; drains once at once for work queued before the eventfd existed.
    private static func drainDispatchMainQueue(on loop: LoopScheduler) -> any DispatchSourceRead {
        let descriptor = _dispatch_get_main_queue_handle_4CF()
        let drain: @Sendable () -> Void = { _dispatch_main_queue_callback_4CF(nil) }
        let source = DispatchSource.makeReadSource(fileDescriptor: descriptor, queue: .global())
        source.setEventHandler {
            var value: UInt64 = 0
            // Resets the eventfd (non-blocking; EAGAIN when another wake-up read it first).
            _ = read(descriptor, &value, MemoryLayout<UInt64>.size)
            _ = loop.schedule(drain)
        }
        source.activate()
        _ = loop.schedule(drain)
        return source
    }
}
#endif
