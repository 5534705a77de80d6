/// Tasks that prefer the concurrent queue (<doc:Concurrency>): `Task(executorPreference: scheduler)` and
/// `withTaskExecutorPreference(scheduler)` run nonisolated async code on it, each job with
/// ``Schedulers/current`` set to the scheduler. It is not a `SerialExecutor`: jobs may run in
/// parallel, so no actor can be pinned to it.
extension ConcurrentQueueScheduler: TaskExecutor {
    /// Queues `job` on the concurrent queue.
    public func enqueue(_ job: consuming ExecutorJob) {
        enqueueTaskJob(UnownedJob(job))
    }
}
