import Dispatch

/// Swift concurrency on the queue: actors pinned to it and tasks that prefer it (<doc:Concurrency>).
///
/// ```swift
/// actor Cache {
///     let scheduler: QueueScheduler
///     nonisolated var unownedExecutor: UnownedSerialExecutor { scheduler.asUnownedSerialExecutor() }
/// }
/// Task(executorPreference: scheduler) { await work() }   // nonisolated code on the queue too
/// ```
///
/// A job goes onto the same serial queue as ``QueueScheduler/schedule(_:)`` work, in FIFO order
/// with it, and runs with ``Schedulers/current`` set to the scheduler, so rule 2 of the
/// <doc:BehaviourContract> holds inside actor methods. Inside one of the scheduler's plain
/// actions, `actor.assumeIsolated` works for an actor pinned to it (rule 10).
///
/// The scheduler is the task executor; actors get a separate executor object of the same queue
/// from ``asUnownedSerialExecutor()``, because an actor's job must run isolated and a task's must
/// not (its nonisolated calls would each cost a hop), and both arrive through `enqueue`.
///
/// - Important: Swift requires an executor to outlive the actors pinned to it; a
///   `QueueScheduler` never shuts down, so keeping it referenced is enough.
extension QueueScheduler: SerialExecutor, TaskExecutor, ActorJobRunner {
    /// Queues the job of a task that prefers this scheduler behind the work already on the queue.
    /// Actors enqueue on ``asUnownedSerialExecutor()``'s executor instead.
    public func enqueue(_ job: consuming ExecutorJob) {
        enqueueTaskJob(UnownedJob(job))
    }

    package func enqueueActorJob(_ job: UnownedJob, executor: ActorExecutor) {
        queue.async { [self] in
            CurrentScheduler.withCurrent(self) {
                job.runSynchronously(on: executor.asUnownedSerialExecutor())
            }
        }
    }

    /// The queue's executor for actors: pin an actor to the scheduler by returning this from its
    /// `unownedExecutor`.
    public func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        actorExecutor.asUnownedSerialExecutor()
    }


    /// Stops the program, naming the scheduler, unless the caller runs on the scheduler's queue.
    /// Runtimes that have ``isIsolatingCurrentContext()`` ask that instead.
    public func checkIsolated() {
        if !isIsolatingItsContext {
            fatalError(
                "QueueScheduler.checkIsolated(): not running on the QueueScheduler '\(queue.label)' "
                    + "(expected one of its actions or jobs)"
            )
        }
    }

    /// True on the scheduler's queue — inside its actions and jobs, and inside anything else the
    /// queue runs (all of it serialised with them); false elsewhere, also inside
    /// ``Scheduler/performAsCurrent(_:)`` on another thread, which sets only the current scheduler.
    public func isIsolatingCurrentContext() -> Bool? {
        isIsolatingItsContext
    }

    package var isIsolatingItsContext: Bool { DispatchQueue.getSpecific(key: isolationKey) == true }

    package var isolationDescription: String { "QueueScheduler '\(queue.label)'" }
}

extension Scheduler {
    /// Whether the calling code runs one of this scheduler's actions or jobs: the explicit current
    /// scheduler, without the main-queue fallback of ``Schedulers/current``.
    package var isRunningItsWork: Bool {
        CurrentScheduler.explicit === self
    }
}
