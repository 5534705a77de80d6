import Benchmark
import LoopScheduling
import Scheduling
@_spi(Workloads) import SchedulingWorkloads

// Issue 29's four Swift-concurrency workloads, `loopsched bench`'s task-sleep, task-sleep-cancel,
// yield and spawn (SchedulingWorkloads: the same code): what Swift's own operations cost in a task
// preferring a LoopScheduler, and in a plain task on Swift's default executor. Built with
// BENCHMARKS_EXPERIMENTAL_EXECUTORS=1 (Package.swift), the root package has its trait
// ExperimentalExecutors and a plain `Task.sleep` in the task on the loop is one of the loop's
// timers; without it, Dispatch's. Every name here ends with the build it ran in, "(trait on)" or
// "(trait off)", so the two builds' results can be told apart. Like the other async benchmarks,
// each runs on the benchmark's own thread, which blocks on the task it starts.

/// Whether this build has the root package's trait ExperimentalExecutors. A dependency's traits
/// are no compiler conditions here: Package.swift defines EXPERIMENTAL_EXECUTORS with the trait.
let experimentalExecutors: Bool = {
    #if EXPERIMENTAL_EXECUTORS
    return true
    #else
    return false
    #endif
}()

/// `task-sleep-cancel`'s held heap, per cancelled sleep (bytes; may be fractional, rounded).
let heldBytesPerSleep = BenchmarkMetric.custom("heap bytes held per cancelled sleep", useScalingFactor: false)

/// Where one of these benchmarks runs its task, and how the task sleeps (the names are
/// `loopsched bench`'s).
enum ExecutorSystemKind: String, CaseIterable {
    /// `Task(executorPreference: loop)`, sleeping with a plain `Task.sleep(for:)`: the loop's timer
    /// with the trait ExperimentalExecutors, Dispatch's without.
    case loopTask = "task on loop"
    /// The same task sleeping with the loop's own `sleep(for:)` (sleep workloads only).
    case loopTaskLoopSleep = "task on loop, loop.sleep"
    /// `Task.detached`: Swift's default executor, sleeping with `Task.sleep(for:)`.
    case defaultExecutor = "task on default executor"

    /// Whether every sleep must be one of the loop's timers (a self-check).
    var loopFiresSleeps: Bool {
        self == .loopTaskLoopSleep || (self == .loopTask && experimentalExecutors)
    }

    /// Runs `body` with a fresh loop, shut down after it; nil on the default executor.
    func withLoop<Result>(_ body: (LoopScheduler?) throws -> Result) throws -> Result {
        guard self != .defaultExecutor else { return try body(nil) }
        let loop = try LoopScheduler(name: "bench")
        defer { loop.syncShutdown() }
        return try body(loop)
    }

    /// How the measured task is started: preferring `loop`, or detached without one.
    func starter(_ loop: LoopScheduler?) -> any TaskStarter {
        loop.map { PreferringTaskStarter($0) } ?? DetachedTaskStarter()
    }

    /// The sleep the workload's tasks make: `loop.sleep(for:)` or a plain `Task.sleep(for:)`.
    func sleep(_ loop: LoopScheduler?) -> @Sendable (Duration) async throws -> Void {
        if self == .loopTaskLoopSleep, let loop {
            { try await loop.sleep(for: $0) }
        } else {
            { try await Task.sleep(for: $0) }
        }
    }
}

/// Registers `task-sleep/*`, `task-sleep-cancel/*`, `yield/*` and `spawn/*` for every system (the
/// loop's own sleep for the sleep workloads only).
func registerExecutorBenchmarks() {
    let build = experimentalExecutors ? " (trait on)" : " (trait off)"
    for kind in ExecutorSystemKind.allCases {
        taskSleepBenchmark(kind, build)
        taskSleepCancelBenchmark(kind, build)
        if kind != .loopTaskLoopSleep {
            yieldAndSpawnBenchmarks(kind, build)
        }
    }
}

/// `task-sleep/*`: 1k sequential 1 ms sleeps in one task (the framework's figures per sleep). The
/// self-check counts sleeps that returned early or threw, sleeps the loop did not fire where it
/// must (`loop.sleep`; `Task.sleep` with the trait), and one more if the task left its executor.
private func taskSleepBenchmark(_ kind: ExecutorSystemKind, _ build: String) {
    Benchmark(
        "task-sleep/\(kind.rawValue)\(build)",
        configuration: configuration(
            [nsPerOp, cpuNsPerOp, latenessP50, latenessP99, selfCheckFailures],
            scaling: .kilo
        )
    ) { benchmark in
        let n = benchmark.scaledIterations.count
        try kind.withLoop { loop in
            let firedBefore = loop?.statistics.timersFired ?? 0
            let run = try Workloads.taskSleep(n, start: kind.starter(loop), home: loop, sleep: kind.sleep(loop))
            var notFired = 0
            if let loop, kind.loopFiresSleeps {
                // The loop publishes its statistics a batch late: the iteration after the run's is done.
                AsyncBridge.roundTripAndIteration(loop)
                notFired = max(0, n - (loop.statistics.timersFired - firedBefore))
            }
            let early = run.lateness.count { $0 < 0 }
            let sorted = run.lateness.sorted()
            benchmark.measurement(latenessP50, Int(percentile(sorted, 0.5) / 1_000))
            benchmark.measurement(latenessP99, Int(percentile(sorted, 0.99) / 1_000))
            recordTaskRun(run, n, benchmark, moreFailures: early + notFired)
        }
    }
}

/// `task-sleep-cancel/* (100k)`: 100k tasks on the system each sleep 30 s, all cancelled once all
/// sleep (the framework's figures per iteration: divide by 100k). A cancelled `Task.sleep` stays
/// queued until its deadline (in Dispatch; with the trait, in a task on the loop, the loop's timer,
/// handed to Dispatch with its deadline when the loop shuts down after the run), which the held
/// heap shows; each benchmark is a process of its own, so none outlives it. The self-check counts
/// the cancelled sleeps that returned normally.
private func taskSleepCancelBenchmark(_ kind: ExecutorSystemKind, _ build: String) {
    let n = 100_000
    Benchmark(
        "task-sleep-cancel/\(kind.rawValue)\(build) (100k)",
        configuration: configuration([nsPerOp, cpuNsPerOp, heldBytesPerSleep, selfCheckFailures], scaling: .one)
    ) { benchmark in
        try kind.withLoop { loop in
            let sleep = kind.sleep(loop)
            let run = try Workloads.sleepCancel(
                n,
                start: kind.starter(loop),
                sleep: { try await sleep(.seconds(30)) },
                // Until the loop's iteration after the run, where a quiet loop gives memory back.
                settle: { if let loop { AsyncBridge.roundTripAndIteration(loop) } }
            )
            benchmark.measurement(nsPerOp, Int(run.nanosecondsPerOperation))
            benchmark.measurement(cpuNsPerOp, Int(run.cpuSeconds * 1e9 / Double(n)))
            benchmark.measurement(heldBytesPerSleep, max(0, Int((Double(run.heldBytes) / Double(n)).rounded())))
            benchmark.measurement(selfCheckFailures, run.failedOperations)
        }
    }
}

/// `yield/*`: 1M sequential `Task.yield()`s in one task. `spawn/*`: 1M empty child tasks of one
/// task, in discarding task groups of 1,000 awaited in turn (children inherit the task's executor
/// preference). The framework's figures per operation; the self-check counts child tasks that did
/// not run, and one more if the task left its executor.
private func yieldAndSpawnBenchmarks(_ kind: ExecutorSystemKind, _ build: String) {
    for workload in ["yield", "spawn"] {
        Benchmark(
            "\(workload)/\(kind.rawValue)\(build)",
            configuration: configuration([nsPerOp, cpuNsPerOp, selfCheckFailures], scaling: .mega)
        ) { benchmark in
            let n = benchmark.scaledIterations.count
            try kind.withLoop { loop in
                let run =
                    if workload == "yield" {
                        try Workloads.yield(n, start: kind.starter(loop), home: loop)
                    } else {
                        try Workloads.spawn(n, start: kind.starter(loop), home: loop)
                    }
                recordTaskRun(run, n, benchmark)
            }
        }
    }
}

/// A one-task run's time and CPU per operation (the operations' span only, as `loopsched`'s), and
/// its self-check failures: operations that did not complete, `moreFailures`, and one more if the
/// task did not stay where it started (on its loop, or on no scheduler).
private func recordTaskRun(_ run: TaskRun, _ n: Int, _ benchmark: Benchmark, moreFailures: Int = 0) {
    benchmark.measurement(nsPerOp, Int(Double(run.nanoseconds) / Double(n)))
    benchmark.measurement(cpuNsPerOp, Int(run.cpuSeconds * 1e9 / Double(n)))
    benchmark.measurement(selfCheckFailures, (n - run.completed) + moreFailures + (run.stayedHome ? 0 : 1))
}
