import Benchmark
import LoopScheduling
import NIOCore
import NIOPosix
import Scheduling
@_spi(Workloads) import SchedulingWorkloads

// The async workloads of Docs/Design.md §8, `loopsched bench`'s actor-hop, sleep-cancel and timeout
// (SchedulingWorkloads: the same code), plus SwiftNIO's event loop as an actor's executor. Each
// runs synchronously on the benchmark's own thread, which blocks on the tasks it starts: it is not
// a cooperative thread, so blocking it takes nothing from the executors under measurement. The
// scheduler rows settle with a plain round trip (`loopsched` waits for the loop's next iteration
// too, where a quiet loop gives memory back).

/// What an async benchmark runs on.
enum AsyncSystemKind: String, CaseIterable {
    case loop = "LoopScheduler"
    case queue = "QueueScheduler"
    case nio = "NIO"
    case defaultActor = "default actor"
    case taskSleep = "Task.sleep"
    case continuousClock = "ContinuousClock.sleep"
    case taskGroupRace = "task-group race"
}

let cpuNsPerOp = BenchmarkMetric.custom("cpu ns per op", useScalingFactor: false)
let selfCheckFailures = BenchmarkMetric.custom("self-check failures", useScalingFactor: false)

/// Runs `body` (which does `n` operations) and records the process's CPU per operation, setting up
/// and shutting down the system included.
private func measuringCPU<T>(_ benchmark: Benchmark, _ n: Int, _ body: () throws -> T) rethrows -> T {
    let before = Measure.processCPUSeconds()
    let result = try body()
    benchmark.measurement(cpuNsPerOp, Int((Measure.processCPUSeconds() - before) * 1e9 / Double(n)))
    return result
}

func registerAsyncBenchmarks() {
    actorHopBenchmarks()
    sleepCancelBenchmarks()
    timeoutBenchmarks()
}

/// `actor-hop-pool/*`: 1M calls from a pool task (a thread hand-off each way, except to a default
/// actor, which the runtime may run on the caller's thread). `actor-hop-own/*`: 1M calls from a
/// task preferring the actor's own executor (no hand-off). Only the schedulers have such rows: a
/// default actor has no executor of its own to prefer, and SwiftNIO 2.101.2's event loop is a
/// `SerialExecutor` but no `TaskExecutor`.
private func actorHopBenchmarks() {
    for kind in [AsyncSystemKind.loop, .queue, .nio, .defaultActor] {
        let callers = kind == .loop || kind == .queue ? ["pool", "own"] : ["pool"]
        for caller in callers {
            Benchmark(
                "actor-hop-\(caller)/\(kind.rawValue)",
                configuration: configuration([nsPerOp, cpuNsPerOp], scaling: .mega)
            ) {
                benchmark in
                let n = benchmark.scaledIterations.count
                let (target, executor, stop) = try hopTarget(kind)
                defer { stop() }
                let run = measuringCPU(benchmark, n) {
                    Workloads.actorHop(to: target, n, preferring: caller == "own" ? executor : nil, home: nil)
                }
                guard let run else { throw WorkloadTimeout("the \(caller) caller did not finish within 300 s") }
                benchmark.measurement(nsPerOp, Int(Double(run.nanoseconds) / Double(n)))
            }
        }
    }
}

/// An actor on `kind`'s executor, the executor a task prefers to run next to it, and what ends it.
private func hopTarget(_ kind: AsyncSystemKind) throws -> (any HopTarget, (any TaskExecutor)?, () -> Void) {
    switch kind {
    case .loop:
        let loop = try LoopScheduler(name: "bench")
        return (PinnedCounter(on: loop), loop, { loop.syncShutdown() })
    case .queue:
        let queue = QueueScheduler(name: "bench", priority: .high)
        return (PinnedCounter(on: queue), queue, {})
    case .nio:
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let executor: any SerialExecutor = group.next().executor
        return (pinnedCounter(on: executor), nil, { try? group.syncShutdownGracefully() })
    case .defaultActor:
        return (PlainCounter(), nil, {})
    default:
        fatalError("actor-hop does not run on \(kind.rawValue)")
    }
}

/// An actor on `executor`, whatever its type (the event loop's is an existential).
private func pinnedCounter(on executor: some SerialExecutor) -> any HopTarget {
    PinnedCounter(on: executor)
}

/// `sleep-cancel/*`: 100k pool tasks sleep 30 s, all cancelled once all sleep. The framework's own
/// figures are per iteration (100k pairs); the custom ones per pair.
private func sleepCancelBenchmarks() {
    let n = 100_000
    let duration = Duration.seconds(30)
    for kind in [AsyncSystemKind.loop, .queue, .taskSleep, .continuousClock] {
        Benchmark(
            "sleep-cancel/\(kind.rawValue) (100k)",
            configuration: configuration([nsPerOp, cpuNsPerOp, heldBytes, selfCheckFailures], scaling: .one)
        ) { benchmark in
            let run = try measuringCPU(benchmark, n) { () throws -> AsyncRun in
                switch kind {
                case .loop:
                    let loop = try LoopScheduler(name: "bench")
                    defer { loop.syncShutdown() }
                    return try Workloads.sleepCancel(n, sleep: { try await loop.sleep(for: duration) }) {
                        AsyncBridge.roundTrip(loop)
                    }
                case .queue:
                    let queue = QueueScheduler(name: "bench", priority: .high)
                    return try Workloads.sleepCancel(n, sleep: { try await queue.sleep(for: duration) }) {
                        AsyncBridge.roundTrip(queue)
                    }
                case .taskSleep:
                    return try Workloads.sleepCancel(n, sleep: { try await Task.sleep(for: duration) }, settle: {})
                default:
                    return try Workloads.sleepCancel(
                        n,
                        sleep: { try await ContinuousClock().sleep(for: duration) },
                        settle: {}
                    )
                }
            }
            record(run, benchmark)
        }
    }
}

/// An async run's figures: per operation, heap held after it, and its self-check.
private func record(_ run: AsyncRun, _ benchmark: Benchmark) {
    benchmark.measurement(nsPerOp, Int(run.nanosecondsPerOperation))
    benchmark.measurement(heldBytes, max(0, run.heldBytes))
    benchmark.measurement(selfCheckFailures, run.failedOperations)
}

/// `timeout/*`: sequential `withTimeout(30 s) { 1 }` calls from one pool task, 1M; the task-group
/// race runs 200k (each cancelled `Task.sleep` stays queued, ~700 bytes, until its deadline 30 s
/// later: 200k keeps every iteration's within those 30 s, so none expire inside a measurement).
private func timeoutBenchmarks() {
    let limit = Duration.seconds(30)
    for kind in [AsyncSystemKind.loop, .queue, .taskGroupRace] {
        let race = kind == .taskGroupRace
        Benchmark(
            "timeout/\(kind.rawValue)\(race ? " (200k)" : "")",
            configuration: configuration(
                [nsPerOp, cpuNsPerOp, heldBytes, selfCheckFailures],
                scaling: race ? .one : .mega
            )
        ) { benchmark in
            let n = race ? 200_000 : benchmark.scaledIterations.count
            let run = try measuringCPU(benchmark, n) { () throws -> AsyncRun in
                switch kind {
                case .loop:
                    let loop = try LoopScheduler(name: "bench")
                    defer { loop.syncShutdown() }
                    return try Workloads.timeoutCalls(n, call: { try await loop.withTimeout(limit) { 1 } }) {
                        AsyncBridge.roundTrip(loop)
                    }
                case .queue:
                    let queue = QueueScheduler(name: "bench", priority: .high)
                    return try Workloads.timeoutCalls(n, call: { try await queue.withTimeout(limit) { 1 } }) {
                        AsyncBridge.roundTrip(queue)
                    }
                default:
                    return try Workloads.timeoutCalls(n, call: { try await raceWithSleep(limit) { 1 } }, settle: {})
                }
            }
            record(run, benchmark)
        }
    }
}
