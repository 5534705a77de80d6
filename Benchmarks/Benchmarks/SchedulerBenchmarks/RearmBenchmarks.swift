import Benchmark
import CLibUVFloor
import NIOCore
import Scheduling
@_spi(Workloads) import SchedulingWorkloads
import Synchronization

// `rearm-{fifo,random}/<system> (N)`: the idle timeout pushed back per request. A steady state of N
// pending 30 s timers; each of 1M operations, on the loop thread, pushes one (the oldest, or a
// random one from the churn's seeded SplitMix) back to now + 30 s. ns per operation and heap bytes
// per pending timer. LoopScheduler and QueueScheduler re-arm in place (`scheduleRearmable(after:)`,
// `rearm(after:)`: SchedulingWorkloads' `rearm`, the code `loopsched bench --workload rearm` runs).
// The loop's dispose + schedule is `timeouts-churn-{fifo,random}/LoopScheduler`: the same ring,
// order and 30 s, so it is not repeated here. The C floor pushes back in place in its own heap
// (`floor_rearm_inplace`), and with `uv_timer_start` on a started handle (`floor_rearm_uvtimer`:
// libuv's remove and insert; its loop never runs, so no clock is read per operation). NIO has no
// re-arm: it cancels a `scheduleCallback` and schedules another, up to 100k pending (its cancel is
// a linear scan of its heap), as in churn.

/// The systems of the rearm rows: how each pushes a timer back.
enum RearmSystem: String, CaseIterable {
    case loop = "LoopScheduler"
    case queue = "QueueScheduler"
    case floor = "libuv-C"
    case floorUVTimer = "libuv-uvtimer"
    case nio = "NIO"

    /// NIO runs 10k and 100k only; the others 10k, 1M and 10M.
    func runs(_ pending: Int) -> Bool {
        self == .nio ? pending <= 100_000 : pending != 100_000
    }
}

func registerRearmBenchmarks() {
    for pending in [10_000, 100_000, 1_000_000, 10_000_000] {
        for order in ["fifo", "random"] {
            for system in RearmSystem.allCases where system.runs(pending) {
                Benchmark(
                    "rearm-\(order)/\(system.rawValue) (\(Churn.label(pending)))",
                    configuration: .init(
                        metrics: [.wallClock, .peakMemoryResident, nsPerOp, bytesPerTimer],
                        warmupIterations: 0,
                        scalingFactor: .one,
                        maxDuration: .seconds(60),
                        maxIterations: pending >= 10_000_000 || (system == .nio && pending > 10_000) ? 1 : 3
                    )
                ) { benchmark in
                    let result = try Rearm.run(system, pending: pending, random: order == "random")
                    benchmark.measurement(nsPerOp, Int(result.nanosecondsPerOperation))
                    if let bytes = result.bytesPerTimer { benchmark.measurement(bytesPerTimer, Int(bytes)) }
                }
            }
        }
    }
}

enum Rearm {
    /// ns per push-back, and heap bytes per pending timer where the workload measures them.
    typealias Run = (nanosecondsPerOperation: Double, bytesPerTimer: Double?)

    static func run(_ system: RearmSystem, pending n: Int, random: Bool) throws -> Run {
        let operations = Int32(Workloads.churnOperations)
        switch system {
        case .floor:
            var bytes = 0.0
            let perOp = floor_rearm_inplace(Int32(n), operations, random ? 1 : 0, &bytes)
            return (perOp, bytes)
        case .floorUVTimer:
            return (floor_rearm_uvtimer(Int32(n), operations, random ? 1 : 0), nil)
        case .nio:
            let nio = NIOTaskSystem()
            defer { nio.shutdown() }
            let run = cancelAndSchedule(nio, n, random: random)
            return (run.nanosecondsPerOperation, run.bytesPerTimer)
        case .loop, .queue:
            let target = try system == .loop ? SchedulerSystem.loop() : SchedulerSystem.queue()
            defer { target.shutdown() }
            let fired = Tally()
            // On the scheduler's own thread (an action on it), as an actor pinned to a loop
            // re-arms its idle timeouts.
            let run = Workloads.rearm(
                target.scheduler,
                pending: n,
                random: random,
                generator: Churn.SplitMix(),
                strayFires: fired
            )
            target.roundTrip()
            precondition(fired.count == 0, "\(fired.count) pushed-back timeouts fired")
            return (run.nanosecondsPerOperation, run.bytesPerTimer)
        }
    }

    /// NIO's push-back: on the event loop, N pending 30 s `scheduleCallback`s; each operation
    /// cancels one (`cancelScheduledCallback`) and schedules a new one at now + 30 s. The ring, the
    /// order and the timing are SchedulingWorkloads' `churn`.
    static func cancelAndSchedule(_ system: NIOTaskSystem, _ n: Int, random: Bool) -> ChurnRun {
        let loop = system.loop
        let result = Mutex<ChurnRun>((nanosecondsPerOperation: 0, bytesPerTimer: 0))
        system.onScheduler {
            var generator = Churn.SplitMix()
            let run = Workloads.churn(
                pending: n,
                random: random,
                generator: &generator,
                arm: { try! loop.scheduleCallback(in: .seconds(30), handler: Churn.Timeout()) },
                cancel: { loop.cancelScheduledCallback($0) }
            )
            result.withLock { $0 = run }
        }
        return result.withLock { $0 }
    }
}
