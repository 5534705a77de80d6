#if CommandLineTool
import LoopScheduling
import Scheduling
@_spi(Workloads) import SchedulingWorkloads

/// `sleep-cancel` and `timeout`, the two async workloads whose operations (a sleep and its
/// cancellation, a call under a deadline) run on the scheduler's timers:
/// - `sleep-cancel`: the "sleep that is almost always cancelled" pattern (a retry back-off, an
///   idle timeout). What matters is the cost of the pair and that a cancelled sleep gives its
///   memory back at once rather than at its deadline.
/// - `timeout`: a deadline per request, nearly all of them met (Docs/Design.md §8.5). The baseline
///   is what people write without a scheduler: a task group racing the operation against
///   `Task.sleep`. Its cancelled sleep stays queued until its deadline, which the held-memory
///   figure shows.
extension AsyncWorkload {
    func runTimedOperations(on system: AsyncSystem, _ n: Int, driver: TimerDriverKind) throws -> Sample {
        let deadline = Duration.seconds(30)
        return try system.withScheduler(driver: driver) { run in
            switch self {
            case .sleepCancel, .taskSleepCancel:
                let sleep: @Sendable () async throws -> Void =
                    switch system {
                    case .loop, .queue, .loopTaskLoopSleep:
                        { [scheduler = run.scheduler!] in try await scheduler.sleep(for: deadline) }
                    case .taskSleep, .loopTask, .defaultExecutor: { try await Task.sleep(for: deadline) }
                    case .continuousClock: { try await ContinuousClock().sleep(for: deadline) }
                    default: preconditionFailure("sleep-cancel does not run on \(system.displayName)")
                    }
                // task-sleep-cancel's tasks prefer the loop; sleep-cancel's are detached, also on a loop.
                let start: any TaskStarter =
                    if let loop = run.loop, system == .loopTask || system == .loopTaskLoopSleep {
                        PreferringTaskStarter(loop)
                    } else {
                        DetachedTaskStarter()
                    }
                return Self.sample(n, per: "pair", failing: { "\($0) cancelled sleeps returned normally" }) {
                    () throws(WorkloadTimeout) in
                    try Workloads.sleepCancel(
                        n,
                        start: start,
                        sleep: sleep,
                        settle: run.settle,
                        iterations: run.iterations
                    )
                }
            case .timeout:
                let call: @Sendable () async throws -> Int =
                    if let scheduler = run.scheduler {
                        { try await scheduler.withTimeout(deadline) { 1 } }
                    } else {
                        { try await raceWithSleep(deadline) { 1 } }
                    }
                return Self.sample(n, per: "call", failing: { "\($0) of \(n) calls did not return the value" }) {
                    () throws(WorkloadTimeout) in
                    try Workloads.timeoutCalls(
                        n,
                        on: system == .loopCaller ? run.loop : nil,
                        call: call,
                        settle: run.settle,
                        iterations: run.iterations
                    )
                }
            case .actorHop, .taskSleep, .yield, .spawn:
                preconditionFailure("\(rawValue) runs no timed operations")
            }
        }
    }

    /// A run's figures per operation (`unit`: "pair", "call"), and its self-checks.
    private static func sample(
        _ n: Int,
        per unit: String,
        failing failure: (Int) -> String,
        _ body: () throws(WorkloadTimeout) -> AsyncRun
    ) -> Sample {
        var sample = Sample()
        do {
            let run = try body()
            if let iterations = run.loopIterations {
                sample.metrics["loop iter/1k"] = Double(iterations) * 1_000 / Double(n)
            }
            sample.metrics["ns/\(unit)"] = run.nanosecondsPerOperation
            sample.metrics["cpu ns/\(unit)"] = run.cpuSeconds * 1e9 / Double(n)
            sample.metrics["held MB after"] = Double(max(0, run.heldBytes)) / 1e6
            if unit == "pair" { sample.metrics["held B/sleep"] = Double(run.heldBytes) / Double(n) }
            if run.failedOperations > 0 { sample.failures.append(failure(run.failedOperations)) }
        } catch {
            sample.failures.append(error.description)
        }
        return sample
    }
}
#endif
