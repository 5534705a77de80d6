import Benchmark
import Glibc
import LoopScheduling
import NIOCore
import NIOPosix
import Scheduling

// The async workloads of Docs/Design.md §8, mirroring `loopsched bench`'s actor-hop, sleep-cancel
// and timeout, plus SwiftNIO's event loop as an actor's executor.

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

/// Process CPU seconds (user + system), for a per-operation CPU figure next to the framework's total.
private func processCPUSeconds() -> Double {
    var usage = rusage()
    getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
    return Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6 + Double(usage.ru_stime.tv_sec)
        + Double(usage.ru_stime.tv_usec) / 1e6
}

/// Runs `body` (which does `n` operations) and records its CPU per operation.
private func measuringCPU<T>(_ benchmark: Benchmark, _ n: Int, _ body: () throws -> T) rethrows -> T {
    let before = processCPUSeconds()
    let result = try body()
    benchmark.measurement(cpuNsPerOp, Int((processCPUSeconds() - before) * 1e9 / Double(n)))
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
                let perCall = measuringCPU(benchmark, n) {
                    AsyncWorkloads.actorHop(to: target, n, preferring: caller == "own" ? executor : nil)
                }
                benchmark.measurement(nsPerOp, Int(perCall))
            }
        }
    }
}

/// An actor on `kind`'s executor, the executor a task prefers to run next to it, and what ends it.
private func hopTarget(_ kind: AsyncSystemKind) throws -> (any HopTarget, (any TaskExecutor)?, () -> Void) {
    switch kind {
    case .loop:
        let loop = try LoopScheduler(name: "bench")
        return (PinnedCounter(on: loop), loop, { loop.shutdown() })
    case .queue:
        let queue = QueueScheduler(name: "bench", priority: .high)
        return (PinnedCounter(on: queue), queue, {})
    case .nio:
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let loop = group.next()
        return (PinnedCounter(on: loop.executor), nil, { try? group.syncShutdownGracefully() })
    case .defaultActor:
        return (PlainCounter(), nil, {})
    default:
        fatalError("actor-hop does not run on \(kind.rawValue)")
    }
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
            let result = try measuringCPU(benchmark, n) { () throws -> (nsPerPair: Double, heldBytes: Int, woke: Int) in
                switch kind {
                case .loop:
                    let loop = try LoopScheduler(name: "bench")
                    defer { loop.shutdown() }
                    return AsyncWorkloads.sleepCancel(n, settle: { roundTrip(loop) }) {
                        try await loop.sleep(for: duration)
                    }
                case .queue:
                    let queue = QueueScheduler(name: "bench", priority: .high)
                    return AsyncWorkloads.sleepCancel(n, settle: { roundTrip(queue) }) {
                        try await queue.sleep(for: duration)
                    }
                case .taskSleep:
                    return AsyncWorkloads.sleepCancel(n, settle: {}) { try await Task.sleep(for: duration) }
                default:
                    return AsyncWorkloads.sleepCancel(n, settle: {}) {
                        try await ContinuousClock().sleep(for: duration)
                    }
                }
            }
            benchmark.measurement(nsPerOp, Int(result.nsPerPair))
            benchmark.measurement(heldBytes, max(0, result.heldBytes))
            benchmark.measurement(selfCheckFailures, result.woke)
        }
    }
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
            let result = try measuringCPU(benchmark, n) {
                () throws -> (nsPerCall: Double, heldBytes: Int, returned: Int) in
                switch kind {
                case .loop:
                    let loop = try LoopScheduler(name: "bench")
                    defer { loop.shutdown() }
                    return AsyncWorkloads.timeoutCalls(n, settle: { roundTrip(loop) }) {
                        try await loop.withTimeout(limit) { 1 }
                    }
                case .queue:
                    let queue = QueueScheduler(name: "bench", priority: .high)
                    return AsyncWorkloads.timeoutCalls(n, settle: { roundTrip(queue) }) {
                        try await queue.withTimeout(limit) { 1 }
                    }
                default:
                    return AsyncWorkloads.timeoutCalls(n, settle: {}) {
                        try await AsyncWorkloads.raceTaskSleep(limit) { 1 }
                    }
                }
            }
            benchmark.measurement(nsPerOp, Int(result.nsPerCall))
            benchmark.measurement(heldBytes, max(0, result.heldBytes))
            benchmark.measurement(selfCheckFailures, n - result.returned)
        }
    }
}
