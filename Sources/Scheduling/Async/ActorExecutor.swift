/// What a scheduler that pins actors does with their jobs (see ``ActorExecutor``).
package protocol ActorJobRunner: AnyObject, Sendable {
    /// Queues an actor's job in the scheduler's FIFO, to run isolated to `executor`.
    func enqueueActorJob(_ job: UnownedJob, executor: ActorExecutor)
    /// Whether the caller runs serialised with the scheduler's actions and jobs: what the actor
    /// executor answers for `isIsolatingCurrentContext()`.
    var isIsolatingItsContext: Bool { get }
    /// The scheduler's name for `checkIsolated()` messages, such as `QueueScheduler 'db'`.
    var isolationDescription: String { get }
}

/// The executor of actors pinned to a scheduler that is also a task executor.
///
/// `SerialExecutor` and `TaskExecutor` deliver jobs through the same `enqueue`, yet a task's job
/// must run with the scheduler as its task executor only (so its nonisolated calls need no hop),
/// and an actor's must run isolated to the actor's executor. A scheduler therefore hands actors
/// this separate object from `asUnownedSerialExecutor()` and takes task jobs itself: which object
/// the runtime calls says which kind of job it is.
// Safe: `runner` is written once, before the object is shared, then only read.
package final class ActorExecutor: SerialExecutor, @unchecked Sendable {
    // Unowned: the scheduler owns this object, and Swift requires an executor to outlive the
    // actors pinned to it.
    private unowned(unsafe) var runner: (any ActorJobRunner)?

    package init() {}

    /// Binds the executor to its scheduler; called once, in the scheduler's `init`.
    package func bind(to runner: any ActorJobRunner) {
        self.runner = runner
    }

    package func enqueue(_ job: consuming ExecutorJob) {
        EnqueueProbe.record(self)
        runner!.enqueueActorJob(UnownedJob(job), executor: self)
    }

    package func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
    }

    package func checkIsolated() {
        if !runner!.isIsolatingItsContext {
            fatalError(
                "\(runner!.isolationDescription).checkIsolated(): not running on it (expected one of its actions or jobs)"
            )
        }
    }

    package func isIsolatingCurrentContext() -> Bool? {
        runner!.isIsolatingItsContext
    }
}
