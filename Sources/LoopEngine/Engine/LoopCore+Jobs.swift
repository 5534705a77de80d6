@_spi(SchedulerEngine) import Scheduling

/// The loop's engine runs the jobs of actors pinned to it: the shared ``ActorExecutor`` (which
/// every executor-providing scheduler hands its actors) enqueues them here, into the loop's FIFO.
extension LoopCore: ActorJobRunner {
    package func enqueueActorJob(_ job: UnownedJob, executor: ActorExecutor) {
        enqueue(.actorJob(job))
    }

    /// True inside this loop's actions and jobs: on its thread within a batch, or on its fallback
    /// queue after it closed.
    package var isIsolatingItsContext: Bool {
        if isOnLoopThread { return isolatesWholeThread || runner.inBatch }
        return fallback.isCurrent
    }

    package var isolationDescription: String { "\(typeName) '\(name)'" }

    package func checkIsolated(function: String) {
        if !isIsolatingItsContext {
            fatalError("\(function): not running on the loop '\(name)' (expected one of its actions or jobs)")
        }
    }
}
