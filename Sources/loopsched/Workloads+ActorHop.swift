#if CommandLineTool
import LoopScheduling
import Scheduling
@_spi(Workloads) import SchedulingWorkloads

/// `actor-hop`: what a call to an actor living on a scheduler costs. From a task on the global pool
/// every call is a thread hand-off each way; from a task that prefers the actor's scheduler, both
/// sides run on the same thread and only the queueing is paid. A default actor is the baseline:
/// the runtime may run it on the caller's own thread.
extension AsyncWorkload {
    static func actorHop(on system: AsyncSystem, _ n: Int, driver: TimerDriverKind) throws -> Sample {
        switch system {
        case .loop:
            let loop = try makeLoop(driver)
            defer { loop.syncShutdown() }
            return hops(to: PinnedCounter(on: loop), n, preferring: loop, home: loop)
        case .queue:
            let queue = makeQueue()
            return hops(to: PinnedCounter(on: queue), n, preferring: queue, home: queue)
        case .defaultActor:
            // No "own" caller: a default actor has no executor of its own for a task to prefer. A task
            // preferring the global executor measured ~30x the pool caller's cost per call here: that
            // figures the runtime's handling of the preference, not the actor. Its pool figure is
            // the baseline for both columns.
            return hops(to: PlainCounter(), n, preferring: nil, home: nil)
        default:
            preconditionFailure("actor-hop does not run on \(system.displayName)")
        }
    }

    /// Both callers of one actor. `home` is the scheduler the preferring task must find itself on,
    /// so a row cannot silently measure the wrong thread.
    private static func hops<Target: HopTarget>(
        to target: Target,
        _ n: Int,
        preferring executor: (any TaskExecutor)?,
        home: (any Scheduler)?
    ) -> Sample {
        var sample = Sample()
        var runs = [("pool", Workloads.actorHop(to: target, n, preferring: nil, home: nil))]
        if let executor {
            runs.append(("own", Workloads.actorHop(to: target, n, preferring: executor, home: home)))
        }
        for (label, run) in runs {
            guard let run else {
                sample.failures.append("the \(label) caller did not finish within 300 s")
                continue
            }
            sample.metrics["\(label) ns/call"] = Double(run.nanoseconds) / Double(n)
            sample.metrics["\(label) cpu ns/call"] = run.cpuSeconds * 1e9 / Double(n)
            if !run.stayedHome { sample.failures.append("the \(label) caller did not run where it should") }
        }
        let expected = runs.count * n
        let total = AsyncBridge.value(of: Task.detached { await target.hop() - 1 })
        if total != expected { sample.failures.append("the actor counted \(total ?? -1) calls, not \(expected)") }
        return sample
    }
}
#endif
