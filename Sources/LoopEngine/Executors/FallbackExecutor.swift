import Dispatch
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The serial queue that runs a loop's jobs after the loop closed, so no task is ever stranded.
///
/// The queue is made by the first job that falls back, never before: a Dispatch queue costs a
/// process its first use of libdispatch (an epoll, an eventfd, a timerfd and worker threads, held
/// for the life of the process), and its release starts a worker thread — which crashed libdispatch
/// at the descriptor limit and spun forever at the thread limit when every scheduler made one at
/// set-up. Most schedulers never refuse a job, so most never touch Dispatch.
///
/// Whether the caller runs one of its jobs is answered by the thread that runs it (recorded around
/// each job; the queue is serial, so one at a time), not by a queue-specific key: the answer needs
/// no queue, and ``LoopScheduler/isIsolatingCurrentContext()`` never makes one.
package final class FallbackExecutor: Sendable {
    private let queue = Mutex<DispatchQueue?>(nil)
    /// The pthread running one of the queue's jobs, as a number; 0 between jobs.
    private let runningThread = Atomic<UInt>(0)

    init() {}

    /// Whether the calling thread is running one of the fallback's jobs. Only that thread ever
    /// writes its own number there, so a relaxed read is exact for the caller.
    var isCurrent: Bool {
        runningThread.load(ordering: .relaxed) == Self.currentThread
    }

    /// Runs a job the closed loop refused. A task job's scheduler is alive: the task's executor
    /// preference holds it (`Task(executorPreference:)`) or the caller's scope does
    /// (`withTaskExecutorPreference`), so each later job of the task comes back here, in order.
    func enqueue(_ item: LoopItem, core: LoopCore) {
        let queue = self.queue.withLock { queue in
            if let queue { return queue }
            let made = DispatchQueue(label: "LoopScheduler.fallback")
            queue = made
            return made
        }
        switch item {
        case .taskJob(let job):
            queue.async { self.run { job.runSynchronously(on: core.taskExecutor!) } }
        case .actorJob(let job):
            queue.async { self.run { job.runSynchronously(on: core.unownedActorExecutor) } }
        case .task, .timer, .cancelled, .rearmed:
            preconditionFailure("FallbackExecutor.enqueue: only jobs fall back")
        }
    }

    /// Whether the queue was ever made: for the tests that check a scheduler touches no Dispatch.
    var hasQueue: Bool { queue.withLock { $0 != nil } }

    private func run(_ job: () -> Void) {
        runningThread.store(Self.currentThread, ordering: .relaxed)
        job()
        runningThread.store(0, ordering: .relaxed)
    }

    private static var currentThread: UInt { UInt(bitPattern: Int(bitPattern: pthread_self())) }
}
