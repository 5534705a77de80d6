#if NIO
import LoopEngine
import NIOCore
@_spi(SchedulerEngine) import Scheduling

/// Swift concurrency on the event loop: actors pinned to the scheduler, and tasks that prefer it.
///
/// ```swift
/// actor Connection {
///     let scheduler: EventLoopScheduler
///     nonisolated var unownedExecutor: UnownedSerialExecutor { scheduler.asUnownedSerialExecutor() }
/// }
/// ```
///
/// A job goes into the same queue as ``EventLoopScheduler/schedule(_:)`` work, in order with it,
/// and runs on the loop thread with `Schedulers.current` set to the scheduler. A job enqueued
/// after the scheduler shut down runs on a serial fallback queue, in order, so no task is
/// stranded.
///
/// **Identity.** The scheduler is its own executor, not the event loop's (`eventLoop.executor`):
/// Swift compares executors of one type only, so no executor of another type can pass for the
/// loop's. A call between an actor pinned to the scheduler and code on `eventLoop.executor` is an
/// enqueue on the same thread, with no thread hop.
///
/// **Isolation is the whole loop thread**, as SwiftNIO's own executor says of itself:
/// ``checkIsolated()`` passes, and ``isIsolatingCurrentContext()`` is true, anywhere on the loop
/// thread — in a channel handler as in the scheduler's own actions — since the scheduler's jobs
/// and every other piece of code on that thread run one at a time. So a channel handler may enter
/// an actor pinned to the scheduler with `assumeIsolated`.
extension EventLoopScheduler: SerialExecutor, TaskExecutor {
    /// Queues the job of a task that prefers this scheduler.
    public func enqueue(_ job: consuming ExecutorJob) {
        EnqueueProbe.record(self)
        core.enqueueTaskJob(UnownedJob(job))
    }

    /// The scheduler's executor for actors: pin an actor to the loop by returning this from its
    /// `unownedExecutor`. Its jobs share the scheduler's queue with ``schedule(_:)`` and task jobs.
    public func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        core.actorExecutorReference
    }

    /// The scheduler as a task's preferred executor.
    public func asUnownedTaskExecutor() -> UnownedTaskExecutor {
        UnownedTaskExecutor(ordinary: self)
    }

    /// Stops the program, naming the scheduler, unless the caller runs on the loop's thread (or on
    /// the fallback queue that runs jobs after the scheduler shut down).
    public func checkIsolated() {
        core.checkIsolated(function: "EventLoopScheduler.checkIsolated()")
    }

    /// True on the loop's thread (anywhere on it: see the extension's discussion), and in a job the
    /// fallback queue runs after the scheduler shut down.
    public func isIsolatingCurrentContext() -> Bool? {
        core.isIsolatingItsContext
    }
}
#endif
