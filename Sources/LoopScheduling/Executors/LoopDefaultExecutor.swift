#if compiler(>=6.3) && ExperimentalExecutors && os(Linux)
// The package trait ExperimentalExecutors (off by default): Swift's unsettled executor SPIs, which
// the next toolchain may not compile. Without the trait nothing of this file is compiled.
@_spi(ExperimentalScheduling) @_spi(ExperimentalCustomExecutors) import _Concurrency
import Foundation
import LoopEngine
@_spi(SchedulerEngine) import Scheduling
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The default executor of ``LoopExecutorFactory``: a group of loops, each on its own thread, that
/// runs every task with no executor preference and serves every `Task.sleep` made outside a
/// preferred executor.
///
/// Where a job goes:
/// 1. enqueued on one of the group's loop threads (a task resumed, yielding, or started by code
///    running there), it stays on that loop: no thread hand-off;
/// 2. from any other thread, it goes to the first open loop, in order, with no task or job
///    waiting in its queue from other threads, so a lightly loaded program keeps its work on few
///    threads and the work spreads as queues back up; when every open loop has work waiting, the
///    loops take turns. A loop that was shut down takes no more work while another is open.
///
/// Jobs run with this executor as their task executor (the default executor's identity), so the
/// runtime sees them as running where tasks with no preference belong and never sends them
/// elsewhere. A sleep's wake-up is one of the chosen loop's timers (as on any loop with the trait).
// Immutable after `init` (`loops`, `threadLoop`) but for an atomic.
final class LoopDefaultExecutor: TaskExecutor, SchedulingExecutor, @unchecked Sendable {
    /// The loops, each on its own thread.
    let loops: [LoopScheduler]
    /// Where the loops take turns when every queue has work waiting.
    private let cursor = Atomic<Int>(0)
    /// This executor's thread key: on each of its loops' threads, the loop's index plus one; null
    /// on every other thread (another executor's loops included).
    private let threadLoop: pthread_key_t

    /// Starts `count` loops named `default-0`, `default-1`, …
    init(count: Int) {
        var key = pthread_key_t()
        let rc = pthread_key_create(&key, nil)
        precondition(rc == 0, "pthread_key_create failed for the default executor's key: \(rc)")
        threadLoop = key
        var loops: [LoopScheduler] = []
        do {
            for index in 0..<count { loops.append(try LoopScheduler(name: "default-\(index)")) }
        } catch {
            fatalError("LoopExecutorFactory: the default executor's loops cannot be set up: \(error)")
        }
        self.loops = loops
        let threadLoop = key
        for (index, loop) in loops.enumerated() {
            // Before any job reaches the loop as this executor's (the runtime asks for the
            // executor only after `init` returned; the loop's queue lock orders its first read of
            // the identity after this write).
            loop.core.adoptIdentities(actor: nil, task: UnownedTaskExecutor(ordinary: self))
            // The loop's first action marks its thread, ahead of any job of this executor.
            _ = loop.schedule {
                let rc = pthread_setspecific(threadLoop, UnsafeRawPointer(bitPattern: index + 1))
                precondition(rc == 0, "pthread_setspecific failed for the default executor's key: \(rc)")
            }
        }
    }

    deinit {
        pthread_key_delete(threadLoop)
    }

    /// Queues the job of a task with no executor preference (see the type's discussion).
    func enqueue(_ job: consuming ExecutorJob) {
        EnqueueProbe.record(self)
        loop().core.enqueueTaskJob(UnownedJob(job))
    }

    /// Files the wake-up of a sleep until `instant` of `clock` as one of a loop's timers, with
    /// `tolerance` as its leeway.
    func enqueue<C: Clock>(
        _ job: consuming ExecutorJob,
        at instant: C.Instant,
        tolerance: C.Duration?,
        clock: C
    ) {
        loop().core.enqueueWake(UnownedJob(job), at: instant, tolerance: tolerance, clock: clock)
    }

    /// Files the wake-up of a sleep of `delay` of `clock`, counted from now.
    func enqueue<C: Clock>(
        _ job: consuming ExecutorJob,
        after delay: C.Duration,
        tolerance: C.Duration?,
        clock: C
    ) {
        loop().core.enqueueWake(UnownedJob(job), after: delay, tolerance: tolerance, clock: clock)
    }

    /// The loop running the calling thread, else the first open loop with no task or job waiting
    /// in its cross-thread queue, else the next open one in turn (any, if none is open: a closed
    /// loop hands jobs to its fallback, and wake-ups to Dispatch with their deadlines).
    @inline(__always)
    func loop() -> LoopScheduler {
        if let marked = pthread_getspecific(threadLoop) {
            return loops[Int(bitPattern: marked) - 1]
        }
        for loop in loops where loop.core.isOpen && !loop.core.mayHoldWork {
            return loop
        }
        let start = (cursor.add(1, ordering: .relaxed).newValue & Int.max) % loops.count
        for offset in 0..<loops.count {
            let loop = loops[(start + offset) % loops.count]
            if loop.core.isOpen { return loop }
        }
        return loops[start]
    }
}
#endif
