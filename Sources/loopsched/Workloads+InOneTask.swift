#if CommandLineTool
import LoopScheduling
import Scheduling
@_spi(Workloads) import SchedulingWorkloads

/// `task-sleep`, `yield` and `spawn`: what Swift concurrency's own operations cost in one task,
/// on a loop and on Swift's default executor (issue 29). The task on the loop is
/// `Task(executorPreference: loop)`; its plain `Task.sleep` is the loop's timer with the package
/// trait ExperimentalExecutors (the loop conforms to `SchedulingExecutor`) and Dispatch's
/// without, so the same command built both ways compares the two (`scripts/bench-executors.sh`).
/// The bodies are in SchedulingWorkloads, generic over how the task is started, so a program with
/// an executor factory of its own runs the same ones in `Task {}`.
extension AsyncWorkload {
    func runInOneTask(on system: AsyncSystem, _ n: Int, driver: TimerDriverKind) throws -> Sample {
        try system.withScheduler(driver: driver) { run in
            var sample = Sample()
            let start: any TaskStarter = run.loop.map { PreferringTaskStarter($0) } ?? DetachedTaskStarter()
            do throws(WorkloadTimeout) {
                switch self {
                case .taskSleep:
                    let sleep: @Sendable (Duration) async throws -> Void =
                        if system == .loopTaskLoopSleep, let loop = run.loop {
                            { try await loop.sleep(for: $0) }
                        } else {
                            { try await Task.sleep(for: $0) }
                        }
                    let firedBefore = run.loop?.statistics.timersFired ?? 0
                    let result = try Workloads.taskSleep(n, start: start, home: run.loop, sleep: sleep)
                    Self.recordSleeps(result, n, on: system, run, firedBefore: firedBefore, into: &sample)
                case .yield:
                    Self.record(try Workloads.yield(n, start: start, home: run.loop), n, per: "yield", into: &sample)
                case .spawn:
                    let result = try Workloads.spawn(n, start: start, home: run.loop)
                    Self.record(result, n, per: "task", into: &sample)
                    if result.completed != n {
                        sample.failures.append("\(result.completed) of \(n) child tasks ran")
                    }
                case .actorHop, .sleepCancel, .taskSleepCancel, .timeout:
                    preconditionFailure("\(rawValue) does not run in one task")
                }
            } catch {
                sample.failures.append(error.description)
            }
            return sample
        }
    }

    /// Time and CPU per operation (`unit`: "yield", "task"), and whether the task stayed home.
    private static func record(_ result: TaskRun, _ n: Int, per unit: String, into sample: inout Sample) {
        sample.metrics["ns/\(unit)"] = Double(result.nanoseconds) / Double(n)
        sample.metrics["cpu ns/\(unit)"] = result.cpuSeconds * 1e9 / Double(n)
        if !result.stayedHome { sample.failures.append("the task did not run where it should") }
    }

    /// `task-sleep`'s figures and self-checks: no sleep early, every sleep returned normally, and on
    /// the loop, every sleep one of its timers where it must be (`loop.sleep` always; `Task.sleep`
    /// with the trait ExperimentalExecutors).
    private static func recordSleeps(
        _ result: TaskRun,
        _ n: Int,
        on system: AsyncSystem,
        _ run: AsyncRunScheduler,
        firedBefore: Int,
        into sample: inout Sample
    ) {
        let lateness = Percentiles(result.lateness)
        let early = result.lateness.count { $0 < 0 }
        sample.lateness = result.lateness
        sample.metrics["p50 µs"] = Double(lateness.value(at: 0.5)) / 1e3
        sample.metrics["p99 µs"] = Double(lateness.value(at: 0.99)) / 1e3
        sample.metrics["cpu µs/sleep"] = result.cpuSeconds * 1e6 / Double(n)
        sample.metrics["early"] = Double(early)
        if early > 0 { sample.failures.append("\(early) of \(n) sleeps returned before their deadline") }
        if result.completed != n { sample.failures.append("\(n - result.completed) of \(n) sleeps threw") }
        if !result.stayedHome { sample.failures.append("the task did not run where it should") }
        guard let loop = run.loop else { return }
        // The loop publishes its statistics a batch late: the iteration after the run's is done.
        run.settle()
        let fired = loop.statistics.timersFired - firedBefore
        sample.metrics["loop timers fired"] = Double(fired)
        if fired < n, system == .loopTaskLoopSleep || (system == .loopTask && RunConditions.experimentalExecutors) {
            sample.failures.append("the loop fired \(fired) timers for \(n) sleeps")
        }
    }
}
#endif
