import Dispatch

/// Tasks that prefer the concurrent queue (Docs/Design.md §8): `Task(executorPreference: scheduler)` and
/// `withTaskExecutorPreference(scheduler)` run nonisolated async code on it, each job with
/// ``Schedulers/current`` set to the scheduler. It is not a `SerialExecutor`: jobs may run in
/// parallel, so no actor can be pinned to it.
extension ConcurrentQueueScheduler: TaskExecutor {
    /// Queues `job` on the concurrent queue.
    public func enqueue(_ job: consuming ExecutorJob) {
        EnqueueProbe.record(self)
        let job = UnownedJob(job)
        queue.async { [self] in
            CurrentScheduler.withCurrent(self) {
                job.runSynchronously(on: asUnownedTaskExecutor())
            }
        }
    }

    /// The scheduler as a task's preferred executor.
    public func asUnownedTaskExecutor() -> UnownedTaskExecutor {
        UnownedTaskExecutor(ordinary: self)
    }
}
