import Benchmark
import CLibUVFloor
import NIOCore
import Scheduling
@_spi(Workloads) import SchedulingWorkloads
import Synchronization

// `timeouts-churn-{fifo,random}/<system> (N)`: the job the library exists for, a timeout per
// request, nearly all cancelled. A steady state of N pending 30 s timeouts on the loop; each of 1M
// operations cancels one (the oldest, or a random one) and schedules one. ns per operation and
// heap bytes per pending timer (the timer, its closure or handler, and its store slot; not the
// harness's array of handles). The C floor keeps its binary heap: that is the comparison. NIO's
// `scheduleCallback` runs up to 100k pending: its cancel is a linear scan of its heap. The ring and
// its operations are SchedulingWorkloads' `churn`, the code `loopsched bench` runs.

func registerChurnBenchmarks() {
    for pending in [10_000, 100_000, 1_000_000, 10_000_000] {
        for order in ["fifo", "random"] {
            for kind in [SystemKind.loop, .floor, .nio] {
                if kind == .nio && pending > 100_000 { continue }
                if pending == 100_000 && kind != .nio { continue }
                Benchmark(
                    "timeouts-churn-\(order)/\(kind.rawValue) (\(Churn.label(pending)))",
                    configuration: .init(
                        metrics: [.wallClock, .peakMemoryResident, nsPerOp, bytesPerTimer],
                        warmupIterations: 0,
                        scalingFactor: .one,
                        maxDuration: .seconds(60),
                        maxIterations: pending >= 10_000_000 || (kind == .nio && pending > 10_000) ? 1 : 3
                    )
                ) { benchmark in
                    let result = try Churn.run(kind, pending: pending, random: order == "random")
                    benchmark.measurement(nsPerOp, Int(result.nanosecondsPerOperation))
                    benchmark.measurement(bytesPerTimer, Int(result.bytesPerTimer))
                }
            }
        }
    }
}

enum Churn {
    static func label(_ n: Int) -> String { n >= 1_000_000 ? "\(n / 1_000_000)M" : "\(n / 1_000)k" }

    static func run(_ kind: SystemKind, pending n: Int, random: Bool) throws -> ChurnRun {
        switch kind {
        case .floor:
            var bytes = 0.0
            let perOp = floor_timeouts_churn(Int32(n), Int32(Workloads.churnOperations), random ? 1 : 0, &bytes)
            return (nanosecondsPerOperation: perOp, bytesPerTimer: bytes)
        case .nio:
            let system = NIOTaskSystem()
            defer { system.shutdown() }
            return nio(system, n, random: random)
        default:
            // The concrete system, not `kind.make()`: the churn is specialised for it, as it always
            // called the scheduler directly.
            let system = try SchedulerSystem.loop()
            defer { system.shutdown() }
            return Workloads.timeoutsChurn(
                system,
                pending: n,
                random: random,
                generator: SplitMix(),
                harness: .benchmarks
            )
        }
    }

    /// The same SplitMix64 as the C floor's, seeded the same, so random orders match.
    struct SplitMix: RandomNumberGenerator {
        var state: UInt64 = 7
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    struct Timeout: NIOScheduledCallbackHandler, Sendable {
        func handleScheduledCallback(eventLoop: some EventLoop) { fatalError("a cancelled timeout fired") }
    }

    static func nio(_ system: NIOTaskSystem, _ n: Int, random: Bool) -> ChurnRun {
        let loop = system.loop
        let result = Mutex<ChurnRun>((nanosecondsPerOperation: 0, bytesPerTimer: 0))
        system.onScheduler {
            var generator = SplitMix()
            let run = Workloads.churn(
                pending: n,
                random: random,
                generator: &generator,
                arm: { try! loop.scheduleCallback(in: .seconds(30), handler: Timeout()) },
                cancel: { $0.cancel() }
            )
            result.withLock { $0 = run }
        }
        return result.withLock { $0 }
    }
}
