import Benchmark
@_spi(Workloads) import SchedulingWorkloads

// `nio-*/<system>`: the side-by-side comparison on one SwiftNIO event loop thread (issue 38,
// item 4), the code `loopsched bench --workload nio-…` runs (SchedulingWorkloads'
// `EventLoopSystemKind` and `Workloads.eventLoop…`): EventLoopScheduler (`eventLoop.scheduler`,
// driven from the loop's own `execute`), SwiftNIO's `scheduleTask` + `cancel` and
// `scheduleCallback` + `cancel` (a handler object per timer), each on a fresh
// `MultiThreadedEventLoopGroup(numberOfThreads: 1)`, and LoopScheduler on its own loop. Every timer
// operation runs on the system's thread. SwiftNIO's random-order rows stop at 100k pending: its
// cancel searches the loop's heap linearly. Its re-arm is cancel + `scheduleCallback`, 100k
// operations in random order (a million elsewhere).

/// The suite's name of each system.
private func label(_ kind: EventLoopSystemKind) -> String {
    switch kind {
    case .eventLoopScheduler: "EventLoopScheduler"
    case .nioScheduleTask: "NIO-scheduleTask"
    case .nioScheduleCallback: "NIO-scheduleCallback"
    case .loopScheduler: "LoopScheduler"
    }
}

let handlerBytesPerTimer = BenchmarkMetric.custom("bytes per pending handler timer", useScalingFactor: false)

/// One iteration per run (a fresh loop each), three runs.
private func eventLoopConfiguration(_ metrics: [BenchmarkMetric]) -> Benchmark.Configuration {
    .init(
        metrics: [.wallClock, .peakMemoryResident] + metrics + [selfCheckFailures],
        warmupIterations: 0,
        scalingFactor: .one,
        maxDuration: .seconds(120),
        maxIterations: 3
    )
}

func registerEventLoopBenchmarks() {
    for pending in [10_000, 100_000, 1_000_000] {
        for order in ["fifo", "random"] {
            for kind in EventLoopSystemKind.allCases where order == "fifo" || kind.runsRandomOrder(pending: pending) {
                let name = "\(label(kind)) (\(Churn.label(pending)))"
                Benchmark("nio-cancel-\(order)/\(name)", configuration: eventLoopConfiguration([nsPerOp, heldBytes])) {
                    benchmark in
                    var generator = SystemRandomNumberGenerator()
                    let indices = Array(0..<pending)
                    let result = try Workloads.eventLoopCancel(
                        kind,
                        order: order == "random" ? indices.shuffled(using: &generator) : indices,
                        harness: .benchmarks
                    )
                    benchmark.measurement(nsPerOp, Int(result.run.nanosecondsPerPair))
                    benchmark.measurement(heldBytes, max(0, result.run.heldBytes))
                    let unheard = result.cancellationsHeard.map { abs(pending - $0) } ?? 0
                    benchmark.measurement(selfCheckFailures, result.strayFires + result.run.unconfirmed + unheard)
                }
                guard kind.rearms else { continue }
                let random = order == "random"
                let operations = kind.rearmOperations(random: random)
                Benchmark(
                    "nio-rearm-\(order)/\(name)",
                    configuration: eventLoopConfiguration([nsPerOp, bytesPerTimer])
                ) {
                    benchmark in
                    guard
                        let run = try Workloads.eventLoopRearm(
                            kind,
                            pending: pending,
                            random: random,
                            operations: operations,
                            generator: Churn.SplitMix()
                        )
                    else { return }
                    benchmark.measurement(nsPerOp, Int(run.nanosecondsPerOperation))
                    benchmark.measurement(bytesPerTimer, Int(run.bytesPerTimer))
                    let unheard = run.cancellationsHeard.map { abs(pending + operations - $0) } ?? 0
                    benchmark.measurement(selfCheckFailures, run.strayFires + unheard)
                }
            }
        }
    }
    for kind in EventLoopSystemKind.allCases {
        Benchmark(
            "nio-fire/\(label(kind)) (1M)",
            configuration: eventLoopConfiguration([nsPerOp, latenessP50, latenessP99, earlyFires])
        ) { benchmark in
            let n = 1_000_000
            let run = try Workloads.eventLoopFire(
                kind,
                fire: TimerBurst(delays: randomDelays(n, below: 1_000_000_000)),
                lateness: [TimerBurst(delays: randomDelays(n, below: 2_000_000_000))]
            )
            let sorted = run.lateness.flatMap(\.afterBurst).sorted()
            benchmark.measurement(nsPerOp, Int(run.fire.nanosecondsPerSchedule))
            benchmark.measurement(latenessP50, Int(percentile(sorted, 0.5) / 1_000))
            benchmark.measurement(latenessP99, Int(percentile(sorted, 0.99) / 1_000))
            benchmark.measurement(earlyFires, run.fire.early + run.lateness.reduce(0) { $0 + $1.early })
            benchmark.measurement(
                selfCheckFailures,
                run.fire.extra + run.lateness.reduce(0) { $0 + $1.missing + $1.extra }
            )
        }
        Benchmark(
            "nio-memory/\(label(kind)) (1M)",
            configuration: eventLoopConfiguration([bytesPerTimer, handlerBytesPerTimer])
        ) { benchmark in
            let run = try Workloads.eventLoopMemory(kind, 1_000_000, harness: .benchmarks)
            if let closure = run.closureTimer { benchmark.measurement(bytesPerTimer, Int(closure)) }
            if let handler = run.handlerTimer { benchmark.measurement(handlerBytesPerTimer, Int(handler)) }
            benchmark.measurement(selfCheckFailures, run.strayFires)
        }
    }
}
