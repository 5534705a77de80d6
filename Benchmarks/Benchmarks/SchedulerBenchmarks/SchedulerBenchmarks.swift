import Benchmark
import CLibUVFloor
@_spi(Benchmarks) import LoopScheduling
import Scheduling
@_spi(Workloads) import SchedulingWorkloads

// The seven workloads of Docs/Design.md §7 on four systems: LoopScheduler, QueueScheduler (Dispatch),
// SwiftNIO's EventLoop, and the raw-libuv C floor; the timer workloads also on LoopScheduler with its
// uv_timer driver (the only one off Linux). The async workloads of section 8 are in AsyncBenchmarks,
// issue 29's (Swift's own sleep, yield and spawn on a loop and on the default executor) in
// ExecutorBenchmarks.
// The workloads are SchedulingWorkloads', the same code `loopsched bench` runs (with this suite's
// `TimerHarness.benchmarks`: no heap trim, empty timer actions); the C floor runs its own. Wall
// time, CPU and mallocs come from the framework; workload-specific figures (ns per schedule,
// lateness percentiles, bytes per timer) are custom metrics.

enum SystemKind: String, CaseIterable {
    case loop = "LoopScheduler"
    case loopUVTimer = "LoopScheduler-uvtimer"
    case queue = "QueueScheduler"
    case nio = "NIO"
    case floor = "libuv-C"

    /// The system, reached through the protocol (its operations dispatched dynamically, as this
    /// suite has always measured them).
    func make() throws -> any WorkloadSystem {
        switch self {
        case .loop: try SchedulerSystem.loop()
        case .loopUVTimer: try SchedulerSystem.loop(driver: .uvTimer)
        case .queue: SchedulerSystem.queue()
        case .nio: NIOTaskSystem()
        case .floor: fatalError("the C floor runs its own workloads")
        }
    }

    /// Only the timer driver differs from `.loop`: plain task submission would measure the same code.
    var runsTaskWorkloads: Bool { self != .loopUVTimer }
}

/// The framework's metrics plus the workload's own.
func configuration(_ extra: [BenchmarkMetric], scaling: BenchmarkScalingFactor) -> Benchmark.Configuration {
    .init(
        metrics: [.wallClock, .cpuTotal, .mallocCountTotal, .peakMemoryResident] + extra,
        warmupIterations: 1,
        scalingFactor: scaling,
        maxDuration: .seconds(120),
        maxIterations: 5
    )
}

let nsPerOp = BenchmarkMetric.custom("ns per op", useScalingFactor: false)
let wallSeconds = BenchmarkMetric.custom("ms until all fired", useScalingFactor: false)
let earlyFires = BenchmarkMetric.custom("early fires", useScalingFactor: false)
let latenessP50 = BenchmarkMetric.custom("lateness p50 (µs)", useScalingFactor: false)
let latenessP99 = BenchmarkMetric.custom("lateness p99 (µs)", useScalingFactor: false)
let driftMicros = BenchmarkMetric.custom("last-tick drift (µs)", useScalingFactor: false)
let heldBytes = BenchmarkMetric.custom("heap bytes held after cancel", useScalingFactor: false)
let bytesPerTimer = BenchmarkMetric.custom("bytes per pending timer", useScalingFactor: false)

let benchmarks: @Sendable () -> Void = {
    for kind in SystemKind.allCases {
        if kind.runsTaskWorkloads {
            taskBenchmarks(kind)
        }
        timerBenchmarks(kind)
    }
    registerAsyncBenchmarks()
    registerExecutorBenchmarks()
    registerChurnBenchmarks()
    registerRearmBenchmarks()
    registerEventLoopBenchmarks()
}

private func taskBenchmarks(_ kind: SystemKind) {
    Benchmark("submit-cross/\(kind.rawValue)", configuration: configuration([nsPerOp], scaling: .mega)) {
        benchmark in
        let n = benchmark.scaledIterations.count
        if kind == .floor {
            benchmark.measurement(nsPerOp, Int(floor_submit_cross(Int32(n))))
            return
        }
        let system = try kind.make()
        defer { system.shutdown() }
        benchmark.measurement(nsPerOp, Int(try Workloads.submit(system, n, from: .otherThread)))
    }

    Benchmark("submit-onloop/\(kind.rawValue)", configuration: configuration([nsPerOp], scaling: .mega)) {
        benchmark in
        let n = benchmark.scaledIterations.count
        if kind == .floor {
            benchmark.measurement(nsPerOp, Int(floor_submit_onloop(Int32(n))))
            return
        }
        let system = try kind.make()
        defer { system.shutdown() }
        benchmark.measurement(nsPerOp, Int(try Workloads.submit(system, n, from: .system)))
    }
}

private func timerBenchmarks(_ kind: SystemKind) {
    Benchmark(
        "timers-fire/\(kind.rawValue)",
        configuration: configuration([nsPerOp, wallSeconds, earlyFires], scaling: .mega)
    ) { benchmark in
        let n = benchmark.scaledIterations.count
        if kind == .floor {
            var wall = 0.0
            var early: Int32 = 0
            benchmark.measurement(nsPerOp, Int(floor_timers_fire(Int32(n), &wall, &early)))
            benchmark.measurement(wallSeconds, Int(wall * 1e3))
            benchmark.measurement(earlyFires, Int(early))
            return
        }
        let system = try kind.make()
        defer { system.shutdown() }
        let result = try TimerBurst(delays: randomDelays(n, below: 1_000_000_000)).fire(on: system)
        benchmark.measurement(nsPerOp, Int(result.nanosecondsPerSchedule))
        benchmark.measurement(wallSeconds, Int(result.wallSeconds * 1e3))
        benchmark.measurement(earlyFires, result.early)
    }

    for order in ["fifo", "random"] {
        // NIO finds a cancelled task by a linear search of its heap: cancelling a million in
        // random order is quadratic and does not finish, so NIO's random order runs 50k.
        let quadratic = kind == .nio && order == "random"
        Benchmark(
            "timers-cancel-\(order)/\(kind.rawValue)\(quadratic ? " (50k)" : "")",
            configuration: configuration([nsPerOp, heldBytes], scaling: quadratic ? .kilo : .mega)
        ) { benchmark in
            let n = quadratic ? 50_000 : benchmark.scaledIterations.count
            if kind == .floor {
                var held = 0
                benchmark.measurement(nsPerOp, Int(floor_timers_cancel(Int32(n), order == "random" ? 1 : 0, &held)))
                benchmark.measurement(heldBytes, max(0, held))
                return
            }
            let system = try kind.make()
            defer { system.shutdown() }
            var generator = SystemRandomNumberGenerator()
            let order = order == "random" ? Array(0..<n).shuffled(using: &generator) : Array(0..<n)
            let result = Workloads.timersCancel(system, order: order, harness: .benchmarks)
            benchmark.measurement(nsPerOp, Int(result.nanosecondsPerPair))
            benchmark.measurement(heldBytes, max(0, result.heldBytes))
        }
    }

    Benchmark(
        "periodic-drift/\(kind.rawValue)",
        configuration: configuration([driftMicros, latenessP50, latenessP99], scaling: .one)
    ) { benchmark in
        if kind == .floor {
            var p50 = 0.0
            var p99 = 0.0
            let drift = floor_periodic_drift(300, &p50, &p99)
            benchmark.measurement(driftMicros, Int(drift / 1e3))
            benchmark.measurement(latenessP50, Int(p50 / 1e3))
            benchmark.measurement(latenessP99, Int(p99 / 1e3))
            return
        }
        let system = try kind.make()
        defer { system.shutdown() }
        let lateness = try Workloads.periodicDrift(system, ticks: 300, harness: .benchmarks)
        let sorted = lateness.sorted()
        benchmark.measurement(driftMicros, Int(Double(lateness.last ?? 0) / 1_000))
        benchmark.measurement(latenessP50, Int(percentile(sorted, 0.5) / 1_000))
        benchmark.measurement(latenessP99, Int(percentile(sorted, 0.99) / 1_000))
    }

    Benchmark(
        "lateness/\(kind.rawValue)",
        configuration: configuration([latenessP50, latenessP99, earlyFires], scaling: .one)
    ) { benchmark in
        let n = 100_000
        if kind == .floor {
            var p99 = 0.0
            var p999 = 0.0
            var maximum = 0.0
            var early: Int32 = 0
            let p50 = floor_lateness(Int32(n), &p99, &p999, &maximum, &early)
            benchmark.measurement(latenessP50, Int(p50 / 1e3))
            benchmark.measurement(latenessP99, Int(p99 / 1e3))
            benchmark.measurement(earlyFires, Int(early))
            return
        }
        let system = try kind.make()
        defer { system.shutdown() }
        let result = try TimerBurst(delays: randomDelays(n, below: 2_000_000_000)).lateness(on: system)
        let sorted = result.afterBurst.sorted()
        benchmark.measurement(latenessP50, Int(percentile(sorted, 0.5) / 1_000))
        benchmark.measurement(latenessP99, Int(percentile(sorted, 0.99) / 1_000))
        benchmark.measurement(earlyFires, result.early)
    }

    Benchmark("pending-memory/\(kind.rawValue)", configuration: configuration([bytesPerTimer], scaling: .mega)) {
        benchmark in
        let n = benchmark.scaledIterations.count
        if kind == .floor {
            benchmark.measurement(bytesPerTimer, Int(floor_pending_memory(Int32(n))))
            return
        }
        let system = try kind.make()
        defer { system.shutdown() }
        benchmark.measurement(bytesPerTimer, Int(Workloads.pendingMemory(system, n, harness: .benchmarks)))
    }
}

/// `n` delays uniform in [0, `bound`) ns, drawn afresh for every iteration.
func randomDelays(_ n: Int, below bound: Int64) -> [Int64] {
    var generator = SystemRandomNumberGenerator()
    return (0..<n).map { _ in Int64.random(in: 0..<bound, using: &generator) }
}

/// The value at `fraction` of `sorted` (index `⌊count × fraction⌋`; 0 when empty): this suite's
/// percentile, which `loopsched` (nearest rank) does not share.
func percentile(_ sorted: [Int64], _ fraction: Double) -> Double {
    sorted.isEmpty ? 0 : Double(sorted[Int(Double(sorted.count) * fraction)])
}
