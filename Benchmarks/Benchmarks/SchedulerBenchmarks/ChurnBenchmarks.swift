import Benchmark
import CLibUVFloor
import NIOCore
import Scheduling

// `timeouts-churn-{fifo,random}/<system> (N)`: the job the library exists for, a timeout per
// request, nearly all cancelled. A steady state of N pending 30 s timeouts on the loop; each of 1M
// operations cancels one (the oldest, or a random one) and schedules one. ns per operation and
// heap bytes per pending timer (the timer, its closure or handler, and its store slot; not the
// harness's array of handles). The C floor keeps its binary heap: that is the comparison. NIO's
// `scheduleCallback` runs up to 100k pending: its cancel is a linear scan of its heap.

let churnOperations = 1_000_000

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
                    benchmark.measurement(nsPerOp, Int(result.nsPerOp))
                    benchmark.measurement(bytesPerTimer, Int(result.bytesPerTimer))
                }
            }
        }
    }
}

enum Churn {
    static func label(_ n: Int) -> String { n >= 1_000_000 ? "\(n / 1_000_000)M" : "\(n / 1_000)k" }

    static func run(_ kind: SystemKind, pending n: Int, random: Bool) throws -> (nsPerOp: Double, bytesPerTimer: Double) {
        switch kind {
        case .floor:
            var bytes = 0.0
            let perOp = floor_timeouts_churn(Int32(n), Int32(churnOperations), random ? 1 : 0, &bytes)
            return (perOp, bytes)
        case .nio:
            let system = NIOSystem()
            defer { system.shutdown() }
            return nio(system, n, random: random)
        default:
            let system = try kind.make() as! SchedulerSystem
            defer { system.shutdown() }
            return scheduler(system, n, random: random)
        }
    }

    /// The same SplitMix64 as the C floor's, seeded the same, so random orders match.
    struct SplitMix {
        var state: UInt64 = 7
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    /// Runs `body(index)` for each operation, on the oldest or a random slot of `n`.
    @inline(__always)
    static func operations(_ n: Int, random: Bool, _ body: (Int) -> Void) -> Double {
        var generator = SplitMix()
        var next = 0
        let start = monotonicNanoseconds()
        for _ in 0..<churnOperations {
            let index: Int
            if random {
                index = Int(generator.next() % UInt64(n))
            } else {
                index = next
                next = next + 1 == n ? 0 : next + 1
            }
            body(index)
        }
        return Double(monotonicNanoseconds() - start) / Double(churnOperations)
    }

    static func scheduler(_ system: SchedulerSystem, _ n: Int, random: Bool) -> (nsPerOp: Double, bytesPerTimer: Double) {
        let scheduler = system.scheduler
        let result = LockedValue((0.0, 0.0))
        onLoop(system) {
            var ring: [any Disposable] = []
            ring.reserveCapacity(n)
            let before = floor_heap_bytes_in_use()
            for _ in 0..<n { ring.append(scheduler.schedule(after: .seconds(30)) { fatalError("a cancelled timeout fired") }) }
            let bytes = Double(floor_heap_bytes_in_use() - before) / Double(n)
            let perOp = operations(n, random: random) { index in
                ring[index].dispose()
                ring[index] = scheduler.schedule(after: .seconds(30)) { fatalError("a cancelled timeout fired") }
            }
            for disposable in ring { disposable.dispose() }
            result.withLock { $0 = (perOp, bytes) }
        }
        return result.withLock { $0 }
    }

    struct Timeout: NIOScheduledCallbackHandler, Sendable {
        func handleScheduledCallback(eventLoop: some EventLoop) { fatalError("a cancelled timeout fired") }
    }

    static func nio(_ system: NIOSystem, _ n: Int, random: Bool) -> (nsPerOp: Double, bytesPerTimer: Double) {
        let loop = system.loop
        let result = LockedValue((0.0, 0.0))
        onLoop(system) {
            var ring: [NIOScheduledCallback] = []
            ring.reserveCapacity(n)
            let before = floor_heap_bytes_in_use()
            for _ in 0..<n { ring.append(try! loop.scheduleCallback(in: .seconds(30), handler: Timeout())) }
            let bytes = Double(floor_heap_bytes_in_use() - before) / Double(n)
            let perOp = operations(n, random: random) { index in
                ring[index].cancel()
                ring[index] = try! loop.scheduleCallback(in: .seconds(30), handler: Timeout())
            }
            for callback in ring { callback.cancel() }
            result.withLock { $0 = (perOp, bytes) }
        }
        return result.withLock { $0 }
    }
}
