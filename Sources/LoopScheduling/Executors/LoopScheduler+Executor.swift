import LoopEngine
@_spi(SchedulerEngine) import Scheduling

/// Swift concurrency on the loop: actors pinned to it and tasks that prefer it (the Concurrency
/// article of module `Scheduling`).
///
/// ```swift
/// actor Connection {
///     let loop: LoopScheduler
///     nonisolated var unownedExecutor: UnownedSerialExecutor { loop.asUnownedSerialExecutor() }
/// }
/// await withTaskExecutorPreference(loop) { await work() }   // nonisolated code on the loop too
/// ```
///
/// A job goes into the same FIFO as ``LoopScheduler/schedule(_:)`` work and runs with
/// `Schedulers.current` set to the scheduler, so the current-scheduler rule (rule 2 of the
/// behaviour contract of module `Scheduling`) holds inside actor methods. A job enqueued after
/// shutdown began still runs — on the loop while it drains, afterwards on a serial fallback queue,
/// one at a time, in FIFO order, with `Schedulers.current` nil — so no task is stranded (rule 10).
///
/// Two executors, one FIFO: the scheduler itself is the task executor, and
/// ``asUnownedSerialExecutor()`` hands actors a separate executor object of the loop. Both protocols
/// deliver jobs through the same `enqueue`, and a task's job must run *not* isolated (so its
/// nonisolated calls need no hop) while an actor's must run isolated to the actor's executor; two
/// objects are how the loop tells them apart. The price: an actor pinned to the loop, called from a
/// task that prefers the loop, is one enqueue each way — on the loop thread, normally in the same
/// iteration, with no thread hand-off.
///
/// - Important: Swift requires an executor to outlive the actors pinned to it. Keep the scheduler
///   alive (and, ideally, running) as long as such actors exist.
///
/// ## Implementation
///
/// A job enqueued from the loop thread goes into the loop-local queue, from any other thread into
/// the cross-thread queue. The queues hold the job itself: enqueueing allocates nothing of ours.
/// The hop of an actor call goes through the loop-local queue; a batch runs up to 64 rounds before
/// the loop polls for I/O.
extension LoopScheduler: SerialExecutor, TaskExecutor {
    /// Queues the job of a task that prefers this scheduler; see the type's discussion for
    /// shutdown. Actors pinned to the loop enqueue on ``asUnownedSerialExecutor()``'s executor
    /// instead; a job handed here runs as a task's, not isolated to any actor.
    public func enqueue(_ job: consuming ExecutorJob) {
        EnqueueProbe.record(self)
        core.enqueueTaskJob(UnownedJob(job))
    }

    /// The loop's executor for actors: pin an actor to the loop by returning this from its
    /// `unownedExecutor`. Its jobs share the loop's FIFO with ``schedule(_:)`` and task jobs.
    public func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        core.actorExecutorReference
    }

    /// The scheduler as a task's preferred executor.
    public func asUnownedTaskExecutor() -> UnownedTaskExecutor {
        UnownedTaskExecutor(ordinary: self)
    }

    /// Stops the program, naming the scheduler, unless the caller runs one of this scheduler's
    /// actions or jobs (or a job on its post-shutdown fallback queue). Runtimes that have
    /// ``isIsolatingCurrentContext()`` ask that instead and stop the program themselves.
    public func checkIsolated() {
        core.checkIsolated(function: "LoopScheduler.checkIsolated()")
    }

    /// True inside this scheduler's actions and jobs: on its loop thread within a batch of its work,
    /// or on its fallback queue after shutdown. False elsewhere, also on the loop thread inside a
    /// host's own callback (adopted mode), which is not the scheduler's context.
    public func isIsolatingCurrentContext() -> Bool? {
        core.isIsolatingItsContext
    }
}
