@_spi(SchedulerEngine) import Scheduling

/// One unit of work for the loop, in the order it was submitted: a task to run, a timer to file, a
/// timer disposed or re-armed off the loop (to free or move its slot now, not at its deadline), or
/// an executor job. Each kind is a case of its own: nothing is told apart by a flag or a cast.
///
/// The queues hold the job itself (a pointer), not a closure around it: enqueueing a job
/// allocates nothing of ours (Docs/Design.md §8.1).
package enum LoopItem {
    /// A task to run.
    case task(LoopWork)
    /// A timer to file in the loop's ``DeadlineStore``.
    case timer(LoopTimer)
    /// A timer that was disposed on another thread.
    case cancelled(LoopTimer)
    /// A timer re-armed on another thread to an earlier deadline (already written in the entry):
    /// the loop files it again now. (A later deadline needs no item: see ``LoopTimer``.)
    case rearmed(LoopTimer)
    /// A job of a task that prefers the scheduler, run with it as the task executor only: its
    /// nonisolated code then calls nonisolated functions without a hop.
    case taskJob(UnownedJob)
    /// A job of an actor pinned to the scheduler, run isolated to the actor executor.
    case actorJob(UnownedJob)
}

#if compiler(>=6.3) && ExperimentalExecutors && os(Linux)
extension LoopItem {
    /// A task or a job: user code the loop runs (a timer, cancellation or re-arm only files).
    @inline(__always)
    var isWork: Bool {
        switch self {
        case .task, .taskJob, .actorJob: true
        case .timer, .cancelled, .rearmed: false
        }
    }
}
#endif
