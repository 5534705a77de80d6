import Dispatch
import Scheduling

/// Swift concurrency on the loop: actors pinned to it and tasks that prefer it (DESIGN §8.1).
///
/// ```swift
/// actor Connection {
///     let loop: LoopScheduler
///     nonisolated var unownedExecutor: UnownedSerialExecutor { loop.asUnownedSerialExecutor() }
/// }
/// await withTaskExecutorPreference(loop) { await work() }   // nonisolated code on the loop too
/// ```
///
/// A job goes into the same FIFO as ``LoopScheduler/schedule(_:)`` work — the loop-local queue
/// from the loop thread, the cross-thread queue otherwise — and runs with ``Schedulers/current``
/// set to the scheduler, so rule 4.2 holds inside actor methods. The queues hold the job itself:
/// enqueueing allocates nothing of ours. A job enqueued after shutdown began still runs: on the
/// loop while it drains, afterwards on a serial fallback queue, one at a time, in FIFO order, with
/// `Schedulers.current` nil (DESIGN §8.2).
///
/// - Important: Swift requires an executor to outlive the actors pinned to it. Keep the scheduler
///   alive (and, ideally, running) as long as such actors exist.
extension LoopScheduler: SerialExecutor, TaskExecutor {
    /// Queues `job` on the loop; see the type's discussion for shutdown.
    public func enqueue(_ job: consuming ExecutorJob) {
        core.enqueue(UnownedJob(job))
    }

    /// The scheduler as an actor's executor.
    public func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
    }

    /// The scheduler as a task's preferred executor.
    public func asUnownedTaskExecutor() -> UnownedTaskExecutor {
        UnownedTaskExecutor(ordinary: self)
    }

    /// Stops the program, naming the scheduler, unless the caller runs one of this scheduler's
    /// actions or jobs (or a job on its post-shutdown fallback queue). Called by the runtime for
    /// `assumeIsolated` and `preconditionIsolated` when its cheaper checks are inconclusive.
    public func checkIsolated() {
        if !core.isIsolatingCurrentContext {
            fatalError(
                "LoopScheduler.checkIsolated(): not running on the loop '\(name)' (expected one of its actions or jobs)"
            )
        }
    }

    /// True inside this scheduler's actions and jobs: on its loop thread within a batch of its work,
    /// or on its fallback queue after shutdown. False elsewhere, also on the loop thread inside a
    /// host's own callback (adopted mode), which is not the scheduler's context.
    public func isIsolatingCurrentContext() -> Bool? {
        core.isIsolatingCurrentContext
    }
}

extension LoopCore {
    /// Queues a job: on the loop while it accepts jobs (open or draining), else on the fallback.
    func enqueue(_ job: UnownedJob) {
        if !submit(.job(job)) { fallback.enqueue(job, core: self) }
    }

    /// Runs a job isolated to this scheduler, with it as the task executor, in one call: the
    /// variant that does not make the runtime enqueue the job again (a second `enqueue` per job
    /// would also break FIFO order with `schedule`).
    @inline(__always)
    func runJob(_ job: UnownedJob) {
        confined.stats.tasksRun += 1
        runIsolated(job)
    }

    @inline(__always)
    func runIsolated(_ job: UnownedJob) {
        let executor = self.executor!
        job.runSynchronously(
            isolatedTo: executor.asUnownedSerialExecutor(),
            taskExecutor: executor.asUnownedTaskExecutor()
        )
    }

    var isIsolatingCurrentContext: Bool {
        if isOnLoopThread { return confined.inBatch }
        return fallback.isCurrent
    }
}

/// The serial queue that runs a loop's jobs after the loop closed, so no task is ever stranded.
final class FallbackExecutor: Sendable {
    private let key = DispatchSpecificKey<Bool>()
    private let queue: DispatchQueue

    init() {
        queue = DispatchQueue(label: "LoopScheduler.fallback")
        queue.setSpecific(key: key, value: true)
    }

    var isCurrent: Bool { DispatchQueue.getSpecific(key: key) == true }

    func enqueue(_ job: UnownedJob, core: LoopCore) {
        queue.async { core.runIsolated(job) }
    }
}
