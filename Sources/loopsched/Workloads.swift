#if CommandLineTool
import Scheduling
@_spi(Workloads) import SchedulingWorkloads

/// What one run of a workload on one scheduler measured.
struct Sample: Sendable {
    /// Figures by metric name, such as `ns/task`.
    var metrics: [String: Double] = [:]
    /// Lateness of each timer (ns), for the percentiles and the plot.
    var lateness: [Int64] = []
    /// Self-checks that failed: a task that did not run, an early or a cancelled timer that fired.
    var failures: [String] = []
}

/// The workloads of Docs/Design.md §7. They are written once, in SchedulingWorkloads (shared with
/// `Benchmarks/`); this names their figures as the table reports them and adds the self-checks.
enum Workload: String, CaseIterable, Codable {
    case submitCross = "submit-cross"
    case submitOnloop = "submit-onloop"
    case timersFire = "timers-fire"
    case timersCancel = "timers-cancel"
    case periodicDrift = "periodic-drift"
    case lateness = "lateness"
    case pendingMemory = "pending-memory"
    case timeoutsChurn = "timeouts-churn"
    case rearm = "rearm"
    case rearmFire = "rearm-fire"

    /// The default size (tasks or timers; for periodic-drift, ticks).
    var defaultSize: Int {
        switch self {
        case .submitCross, .submitOnloop, .timersFire, .timersCancel, .pendingMemory, .timeoutsChurn, .rearm: 1_000_000
        case .rearmFire: 100_000
        case .periodicDrift: 300
        case .lateness: 100_000
        }
    }

    /// Whether the scheduler mostly waits during the workload, so two can run it at once without
    /// disturbing each other's figures.
    var isMostlyIdle: Bool { self == .periodicDrift }

    /// What the workload does, in one line.
    var summary: String {
        switch self {
        case .submitCross: "one other thread submits n tasks; until all ran"
        case .submitOnloop: "a running task submits n tasks to its own scheduler; until all ran"
        case .timersFire: "n one-shot timers, delays uniform in [0, 1 s]"
        case .timersCancel: "n timers 30 s out, all cancelled (FIFO, then random order)"
        case .periodicDrift: "a 10 ms periodic timer for n ticks"
        case .lateness: "n timers uniform in [0, 2 s]; lateness of those due after the burst"
        case .pendingMemory: "bytes per pending timer with n pending (closure timers, then handler timers)"
        case .timeoutsChurn: "n pending 30 s timeouts; 1M ops each cancel one (oldest, then random) and schedule one"
        case .rearm:
            "n pending 30 s re-armable timeouts; 1M ops each push one back to now + 30 s (oldest, then random), "
                + "on the scheduler's thread, then from another thread"
        case .rearmFire:
            "n timers due in 50 ms, each pushed back 3 times then fired: CPU ns per timer with rearm, "
                + "and with dispose + schedule"
        }
    }

    func run(on target: SchedulerSystem, size n: Int, seed: UInt64) -> Sample {
        var sample = Sample()
        do {
            switch self {
            case .submitCross: sample.metrics["ns/task"] = try Workloads.submit(target, n, from: .otherThread)
            case .submitOnloop: sample.metrics["ns/task"] = try Workloads.submit(target, n, from: .system)
            case .timersFire: try Self.timersFire(target, n, seed: seed, into: &sample)
            case .timersCancel: Self.timersCancel(target, n, seed: seed, into: &sample)
            case .periodicDrift: try Self.periodicDrift(target, ticks: n, into: &sample)
            case .lateness: try Self.lateness(target, n, seed: seed, into: &sample)
            case .pendingMemory: Self.pendingMemory(target, n, into: &sample)
            case .timeoutsChurn: Self.timeoutsChurn(target, n, into: &sample)
            case .rearm: Self.rearm(target, n, into: &sample)
            case .rearmFire: Self.rearmFire(target, n, into: &sample)
            }
        } catch {
            sample.failures.append(error.description)
        }
        return sample
    }

    /// `n` delays uniform in [0, `bound`) ns, the same for every scheduler of a repetition.
    static func delays(_ n: Int, below bound: UInt64, seed: UInt64) -> [Int64] {
        var generator = SplitMix(seed: seed)
        return (0..<n).map { _ in Int64(generator.next() % bound) }
    }

    private static func timersFire(
        _ target: SchedulerSystem,
        _ n: Int,
        seed: UInt64,
        into sample: inout Sample
    ) throws(WorkloadTimeout) {
        let run = try TimerBurst(delays: delays(n, below: 1_000_000_000, seed: seed)).fire(on: target)
        sample.metrics["ns/schedule"] = run.nanosecondsPerSchedule
        sample.metrics["wall s"] = run.wallSeconds
        sample.metrics["cpu s"] = run.cpuSeconds
        if run.early > 0 { sample.failures.append("\(run.early) timers fired early") }
        if run.extra > 0 { sample.failures.append("\(run.extra) fires beyond one per timer") }
    }

    /// `timers-cancel`'s two orders of `n` timers, labelled: FIFO, then shuffled by `seed` (what
    /// `loopsched bound` runs too, so its figures sit beside these).
    static func cancelOrders(_ n: Int, seed: UInt64) -> [(label: String, order: [Int])] {
        var generator = SplitMix(seed: seed)
        return [("fifo", Array(0..<n)), ("random", Array(0..<n).shuffled(using: &generator))]
    }

    /// The generator of `timeouts-churn`'s random picks, the same for every scheduler and for
    /// `loopsched bound`.
    static var churnGenerator: SplitMix { SplitMix(seed: 7) }

    private static func timersCancel(_ target: SchedulerSystem, _ n: Int, seed: UInt64, into sample: inout Sample) {
        let fired = Tally()
        for (label, order) in cancelOrders(n, seed: seed) {
            let run = Workloads.timersCancel(
                target,
                order: order,
                harness: .loopsched.countingStrayFires(in: fired),
                settle: target.settle
            )
            sample.metrics["ns/pair \(label)"] = run.nanosecondsPerPair
            if run.unconfirmed > 0 { sample.failures.append("\(label): \(run.unconfirmed) timers not disposed") }
            if label == "fifo" {
                sample.metrics["peak MB"] = Double(run.peakBytes) / 1e6
                sample.metrics["held MB after"] = Double(max(0, run.heldBytes)) / 1e6
            }
        }
        target.roundTrip()
        if fired.count > 0 { sample.failures.append("\(fired.count) cancelled timers fired") }
    }

    private static func periodicDrift(
        _ target: SchedulerSystem,
        ticks: Int,
        into sample: inout Sample
    ) throws(WorkloadTimeout) {
        let lateness = try Workloads.periodicDrift(target, ticks: ticks, harness: .loopsched)
        let percentiles = Percentiles(lateness)
        sample.metrics["last-tick drift ms"] = Double(lateness.last ?? 0) / 1e6
        sample.metrics["tick p50 µs"] = Double(percentiles.value(at: 0.5)) / 1e3
        sample.metrics["tick p99 µs"] = Double(percentiles.value(at: 0.99)) / 1e3
        sample.lateness = lateness
        if percentiles.min < 0 { sample.failures.append("a tick started \(-percentiles.min) ns before its grid point") }
    }

    private static func lateness(
        _ target: SchedulerSystem,
        _ n: Int,
        seed: UInt64,
        into sample: inout Sample
    ) throws(WorkloadTimeout) {
        let run = try TimerBurst(delays: delays(n, below: 2_000_000_000, seed: seed)).lateness(on: target)
        let percentiles = Percentiles(run.afterBurst)
        sample.metrics["p50 µs"] = Double(percentiles.value(at: 0.5)) / 1e3
        sample.metrics["p99 µs"] = Double(percentiles.value(at: 0.99)) / 1e3
        sample.metrics["p99.9 µs"] = Double(percentiles.value(at: 0.999)) / 1e3
        sample.metrics["max µs"] = Double(percentiles.max) / 1e3
        sample.metrics["early"] = Double(run.early)
        sample.lateness = run.afterBurst
        if run.early > 0 { sample.failures.append("\(run.early) timers fired early") }
        if run.missing > 0 { sample.failures.append("\(run.missing) timers never fired") }
        if run.extra > 0 { sample.failures.append("\(run.extra) fires beyond one per timer") }
    }

    private static func pendingMemory(_ target: SchedulerSystem, _ n: Int, into sample: inout Sample) {
        let fired = Tally()
        sample.metrics["bytes/timer"] = Workloads.pendingMemory(
            target,
            n,
            harness: .loopsched.countingStrayFires(in: fired)
        )
        sample.metrics["bytes/handler timer"] = Workloads.pendingHandlerMemory(
            target,
            n,
            harness: .loopsched,
            strayFires: fired
        )
        if fired.count > 0 { sample.failures.append("\(fired.count) pending timers fired") }
    }

    /// `timeouts-churn`: what the library exists for, a timeout per request and nearly all of them
    /// cancelled. A steady state of `n` pending 30 s timeouts; each of 1M operations cancels one
    /// (the oldest, then in a second pass a random one) and schedules one in its place. ns per
    /// operation, and heap bytes per pending timer (entry, closure context and store slot; not the
    /// harness's array of disposables).
    private static func timeoutsChurn(_ target: SchedulerSystem, _ n: Int, into sample: inout Sample) {
        let fired = Tally()
        for random in [false, true] {
            let run = Workloads.timeoutsChurn(
                target,
                pending: n,
                random: random,
                generator: churnGenerator,
                harness: .loopsched.countingStrayFires(in: fired)
            )
            sample.metrics[random ? "ns/op random" : "ns/op fifo"] = run.nanosecondsPerOperation
            if !random { sample.metrics["bytes/timer"] = run.bytesPerTimer }
        }
        target.roundTrip()
        if fired.count > 0 { sample.failures.append("\(fired.count) cancelled timeouts fired") }
    }

    /// `rearm`: the idle timeout pushed back per request. A steady state of `n` pending 30 s
    /// re-armable timers; each of 1M operations pushes one back to now + 30 s (the oldest, then a
    /// random one), on the scheduler's thread, then the same from another thread. ns per
    /// operation, bytes per pending timer, and heap bytes kept per operation (0: nothing kept).
    private static func rearm(_ target: SchedulerSystem, _ n: Int, into sample: inout Sample) {
        let fired = Tally()
        for fromOtherThread in [false, true] {
            for random in [false, true] {
                let run = Workloads.rearm(
                    target.scheduler,
                    pending: n,
                    random: random,
                    generator: churnGenerator,
                    fromOtherThread: fromOtherThread,
                    strayFires: fired
                )
                let order = random ? "random" : "fifo"
                sample.metrics[fromOtherThread ? "ns/op \(order) other thread" : "ns/op \(order)"] = run.nanosecondsPerOperation
                if !random && !fromOtherThread {
                    sample.metrics["bytes/timer"] = run.bytesPerTimer
                    sample.metrics["bytes kept/op"] = run.bytesKeptPerOperation
                }
            }
        }
        target.roundTrip()
        if fired.count > 0 { sample.failures.append("\(fired.count) pushed-back timeouts fired") }
    }

    /// `rearm-fire`: re-armed timers that do come due, against dispose + schedule.
    private static func rearmFire(_ target: SchedulerSystem, _ n: Int, into sample: inout Sample) {
        for rearms in [true, false] {
            let run = Workloads.rearmFire(target.scheduler, n, delayMilliseconds: 50, pushes: 3, rearms: rearms)
            sample.metrics[rearms ? "CPU ns/timer rearm" : "CPU ns/timer dispose+schedule"] = run.cpuNanosecondsPerTimer
            if run.early > 0 { sample.failures.append("\(run.early) re-armed timers fired before their last deadline") }
            if run.fired != n { sample.failures.append("\(run.fired) of \(n) timers fired") }
        }
    }
}
#endif
