#if CommandLineTool && NIO
import LoopScheduling
import Scheduling
@_spi(Workloads) import SchedulingWorkloads

/// The side-by-side comparison on one SwiftNIO event loop thread (issue 38, item 4): this
/// package's `EventLoopScheduler`, SwiftNIO's `scheduleTask` and `scheduleCallback` on the same
/// kind of loop (NIOPosix, one thread), and a `LoopScheduler` on its own loop for reference
/// (``EventLoopSystemKind``). Each run makes a fresh system and does every timer operation on its
/// thread. The workloads are SchedulingWorkloads' (shared with `Benchmarks/`); this names their
/// figures and adds the self-checks.
enum NIOWorkload: String, CaseIterable, Codable {
    case cancel = "nio-cancel"
    case rearm = "nio-rearm"
    case fire = "nio-fire"
    case memory = "nio-memory"

    /// The pending counts a run covers unless `--n` names one.
    var defaultSizes: [Int] {
        switch self {
        case .cancel, .rearm: [10_000, 100_000, 1_000_000]
        case .fire, .memory: [1_000_000]
        }
    }

    var summary: String {
        switch self {
        case .cancel:
            "on one event loop thread: n timers 30 s out scheduled, then all cancelled (oldest first, then random); "
                + "EventLoopScheduler, SwiftNIO's scheduleTask and scheduleCallback (random order up to 100k), "
                + "LoopScheduler on its own loop"
        case .rearm:
            "the same systems: n pending 30 s timers, each operation pushes one back to now + 30 s (oldest, then "
                + "random); SwiftNIO: cancel + scheduleCallback"
        case .fire:
            "the same systems: n timers in [0, 1 s) fired (ns per schedule), then n in [0, 2 s) and n/10 in "
                + "[0, 2 s) (lateness of those due after the burst), every fire checked against its deadline"
        case .memory:
            "the same systems: bytes per pending timer with n pending, closure timers, then handler timers "
                + "sharing one handler, each on a fresh system"
        }
    }

    /// Whether `system` runs this workload at all.
    func runs(on system: EventLoopSystemKind) -> Bool {
        self != .rearm || system.rearms
    }

    func run(on system: EventLoopSystemKind, size n: Int, seed: UInt64, driver: TimerDriverKind) -> Sample {
        let run = NIORun(system: system, n: n, seed: seed, driver: driver)
        var sample = Sample()
        do {
            switch self {
            case .cancel: try run.cancel(into: &sample)
            case .rearm: try run.rearm(into: &sample)
            case .fire: try run.fire(into: &sample)
            case .memory: try run.memory(into: &sample)
            }
        } catch {
            sample.failures.append("\(error)")
        }
        return sample
    }
}

/// One run of a workload: the system, its pending count, the repetition's seed and the timer
/// driver of a `LoopScheduler`.
private struct NIORun {
    let system: EventLoopSystemKind
    let n: Int
    let seed: UInt64
    let driver: TimerDriverKind

    /// How the run makes its `LoopScheduler`: as `loopsched bench`'s other rows, on `driver`.
    private var makeLoop: () throws -> LoopScheduler {
        { [driver] in try LoopScheduler(name: "bench-loop", clock: SystemClock(), driver: driver) }
    }

    func cancel(into sample: inout Sample) throws {
        for (label, order) in Workload.cancelOrders(n, seed: seed)
        where label == "fifo" || system.runsRandomOrder(pending: n) {
            let result = try Workloads.eventLoopCancel(system, order: order, harness: .loopsched, makeLoop: makeLoop)
            sample.metrics["ns/pair \(label)"] = result.run.nanosecondsPerPair
            sample.metrics["held KB \(label)"] = Double(max(0, result.run.heldBytes)) / 1e3
            if result.strayFires > 0 { sample.failures.append("\(label): \(result.strayFires) cancelled timers fired") }
            if result.run.unconfirmed > 0 {
                sample.failures.append("\(label): \(result.run.unconfirmed) cancellations not confirmed")
            }
            if let heard = result.cancellationsHeard, heard != n {
                sample.failures.append("\(label): the handlers heard \(heard) cancellations for \(n) timers")
            }
        }
    }

    func rearm(into sample: inout Sample) throws {
        for random in [false, true] where !random || system.runsRandomOrder(pending: n) {
            let label = random ? "random" : "fifo"
            let operations = system.rearmOperations(random: random)
            guard
                let run = try Workloads.eventLoopRearm(
                    system,
                    pending: n,
                    random: random,
                    operations: operations,
                    generator: Workload.churnGenerator,
                    makeLoop: makeLoop
                )
            else { continue }
            sample.metrics["ns/op \(label)"] = run.nanosecondsPerOperation
            if !random { sample.metrics["bytes/timer"] = run.bytesPerTimer }
            if run.strayFires > 0 { sample.failures.append("\(label): \(run.strayFires) pushed-back timers fired") }
            if let heard = run.cancellationsHeard, heard != n + operations {
                sample.failures.append(
                    "\(label): the handlers heard \(heard) cancellations for \(n + operations) cancelled callbacks"
                )
            }
        }
    }

    func fire(into sample: inout Sample) throws {
        let light = max(1, n / 10)
        let run = try Workloads.eventLoopFire(
            system,
            fire: TimerBurst(delays: Workload.delays(n, below: 1_000_000_000, seed: seed)),
            lateness: [
                TimerBurst(delays: Workload.delays(n, below: 2_000_000_000, seed: seed &+ 1)),
                TimerBurst(delays: Workload.delays(light, below: 2_000_000_000, seed: seed &+ 2)),
            ],
            makeLoop: makeLoop
        )
        sample.metrics["ns/schedule"] = run.fire.nanosecondsPerSchedule
        sample.metrics["wall s"] = run.fire.wallSeconds
        for (burst, suffix) in zip(run.lateness, ["", " n/10"]) {
            let lateness = Percentiles(burst.afterBurst)
            sample.metrics["p50 µs\(suffix)"] = Double(lateness.value(at: 0.5)) / 1e3
            sample.metrics["p99 µs\(suffix)"] = Double(lateness.value(at: 0.99)) / 1e3
        }
        sample.lateness = run.lateness.first?.afterBurst ?? []
        let early = run.fire.early + run.lateness.reduce(0) { $0 + $1.early }
        let missing = run.lateness.reduce(0) { $0 + $1.missing }
        let extra = run.fire.extra + run.lateness.reduce(0) { $0 + $1.extra }
        sample.metrics["early"] = Double(early)
        if early > 0 { sample.failures.append("\(early) timers fired before their deadline") }
        if missing > 0 { sample.failures.append("\(missing) timers never fired") }
        if extra > 0 { sample.failures.append("\(extra) fires beyond one per timer") }
    }

    func memory(into sample: inout Sample) throws {
        let run = try Workloads.eventLoopMemory(system, n, harness: .loopsched, makeLoop: makeLoop)
        sample.metrics["bytes/timer"] = run.closureTimer
        sample.metrics["bytes/handler timer"] = run.handlerTimer
        if run.strayFires > 0 { sample.failures.append("\(run.strayFires) pending timers fired") }
    }
}
#endif
