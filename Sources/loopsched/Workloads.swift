#if CommandLineTool
import Dispatch
import Foundation
import Scheduling
import Synchronization

/// What one run of a workload on one scheduler measured.
struct Sample: Sendable {
    /// Figures by metric name, such as `ns/task`.
    var metrics: [String: Double] = [:]
    /// Lateness of each timer (ns), for the percentiles and the plot.
    var lateness: [Int64] = []
    /// Self-checks that failed: a task that did not run, an early or a cancelled timer that fired.
    var failures: [String] = []
}

/// The workloads of Docs/Design.md §7.
enum Workload: String, CaseIterable, Codable {
    case submitCross = "submit-cross"
    case submitOnloop = "submit-onloop"
    case timersFire = "timers-fire"
    case timersCancel = "timers-cancel"
    case periodicDrift = "periodic-drift"
    case lateness = "lateness"
    case pendingMemory = "pending-memory"
    case timeoutsChurn = "timeouts-churn"

    /// The default size (tasks or timers; for periodic-drift, ticks).
    var defaultSize: Int {
        switch self {
        case .submitCross, .submitOnloop, .timersFire, .timersCancel, .pendingMemory, .timeoutsChurn: 1_000_000
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
        case .pendingMemory: "bytes per pending timer with n pending"
        case .timeoutsChurn: "n pending 30 s timeouts; 1M ops each cancel one (oldest, then random) and schedule one"
        }
    }

    func run(on target: RunningTarget, size n: Int, seed: UInt64) -> Sample {
        switch self {
        case .submitCross: Self.submitCross(target, n)
        case .submitOnloop: Self.submitOnloop(target, n)
        case .timersFire: Self.timersFire(target, n, seed: seed)
        case .timersCancel: Self.timersCancel(target, n, seed: seed)
        case .periodicDrift: Self.periodicDrift(target, ticks: n)
        case .lateness: Self.lateness(target, n, seed: seed)
        case .pendingMemory: Self.pendingMemory(target, n)
        case .timeoutsChurn: Self.timeoutsChurn(target, n)
        }
    }

    private static func submitCross(_ target: RunningTarget, _ n: Int) -> Sample {
        let countdown = Countdown(n)
        let scheduler = target.scheduler
        let start = Measure.now()
        for _ in 0..<n { scheduler.schedule { countdown.tick() } }
        var sample = Sample()
        guard countdown.wait(timeout: .seconds(120)) else {
            sample.failures.append("\(countdown.left) of \(n) tasks never ran")
            return sample
        }
        let elapsed = countdown.finishedAt.load(ordering: .acquiring) - start
        sample.metrics["ns/task"] = Double(elapsed) / Double(n)
        return sample
    }

    private static func submitOnloop(_ target: RunningTarget, _ n: Int) -> Sample {
        let countdown = Countdown(n)
        let scheduler = target.scheduler
        let start = Atomic<Int64>(0)
        scheduler.schedule {
            start.store(Measure.now(), ordering: .relaxed)
            for _ in 0..<n { scheduler.schedule { countdown.tick() } }
        }
        var sample = Sample()
        guard countdown.wait(timeout: .seconds(120)) else {
            sample.failures.append("\(countdown.left) of \(n) tasks never ran")
            return sample
        }
        let elapsed = countdown.finishedAt.load(ordering: .acquiring) - start.load(ordering: .relaxed)
        sample.metrics["ns/task"] = Double(elapsed) / Double(n)
        return sample
    }

    private static func timersFire(_ target: RunningTarget, _ n: Int, seed: UInt64) -> Sample {
        var generator = SplitMix(seed: seed)
        let delays = (0..<n).map { _ in Int64(generator.next() % 1_000_000_000) }
        let countdown = Countdown(n)
        let early = Atomic<Int>(0)
        let scheduler = target.scheduler
        let timing = LockedValue<(start: Int64, scheduled: Int64)>((0, 0))
        let cpuBefore = Measure.processCPUSeconds()
        target.onScheduler {
            let start = Measure.now()
            for delay in delays {
                // `start + delay` is a lower bound of each timer's due time.
                let due = start + delay
                scheduler.schedule(after: .nanoseconds(delay)) {
                    if Measure.now() < due { early.add(1, ordering: .relaxed) }
                    countdown.tick()
                }
            }
            timing.withLock { $0 = (start, Measure.now()) }
        }
        var sample = Sample()
        guard countdown.wait(timeout: .seconds(120)) else {
            sample.failures.append("\(countdown.left) of \(n) timers never fired")
            return sample
        }
        let (start, scheduled) = timing.withLock { $0 }
        sample.metrics["ns/schedule"] = Double(scheduled - start) / Double(n)
        sample.metrics["wall s"] = Double(countdown.finishedAt.load(ordering: .acquiring) - start) / 1e9
        sample.metrics["cpu s"] = Measure.processCPUSeconds() - cpuBefore
        let earlyCount = early.load(ordering: .relaxed)
        if earlyCount > 0 { sample.failures.append("\(earlyCount) timers fired early") }
        return sample
    }

    private static func timersCancel(_ target: RunningTarget, _ n: Int, seed: UInt64) -> Sample {
        var sample = Sample()
        let fired = Atomic<Int>(0)
        let scheduler = target.scheduler
        var generator = SplitMix(seed: seed)
        let randomOrder = Array(0..<n).shuffled(using: &generator)
        for (label, order) in [("fifo", Array(0..<n)), ("random", randomOrder)] {
            Measure.trimHeap()
            target.roundTrip()
            let baseline = Measure.heapBytesInUse()
            let result = LockedValue<(perPair: Double, peak: Int)>((0, 0))
            target.onScheduler {
                var disposables: [any Disposable] = []
                disposables.reserveCapacity(n)
                let arrayBytes = Measure.heapBytesInUse()
                let start = Measure.now()
                for _ in 0..<n {
                    disposables.append(scheduler.schedule(after: .seconds(30)) { fired.add(1, ordering: .relaxed) })
                }
                let peak = Measure.heapBytesInUse() - arrayBytes
                for index in order { disposables[index].dispose() }
                let elapsed = Measure.now() - start
                result.withLock { $0 = (Double(elapsed) / Double(n), peak) }
            }
            target.roundTrip()
            let held = Measure.heapBytesInUse() - baseline
            let (perPair, peak) = result.withLock { $0 }
            sample.metrics["ns/pair \(label)"] = perPair
            if label == "fifo" {
                sample.metrics["peak MB"] = Double(peak) / 1e6
                sample.metrics["held MB after"] = Double(max(0, held)) / 1e6
            }
        }
        target.roundTrip()
        let firedCount = fired.load(ordering: .relaxed)
        if firedCount > 0 { sample.failures.append("\(firedCount) cancelled timers fired") }
        return sample
    }

    private static func periodicDrift(_ target: RunningTarget, ticks: Int) -> Sample {
        let interval: Int64 = 10_000_000
        let times = Slots(count: ticks)
        let count = Atomic<Int>(0)
        let countdown = Countdown(1)
        let slot = LockedValue<(any Disposable)?>(nil)
        let origin = Measure.now() + interval
        let disposable = target.scheduler.schedule(
            after: .nanoseconds(interval),
            repeatingEvery: .nanoseconds(interval)
        ) {
            let index = count.add(1, ordering: .relaxed).newValue - 1
            guard index < ticks else { return }
            times.set(index, Measure.now())
            if index == ticks - 1 {
                slot.withLock { $0?.dispose() }
                countdown.tick()
            }
        }
        slot.withLock { $0 = disposable }
        var sample = Sample()
        guard countdown.wait(timeout: .seconds(Int64(ticks) / 10 + 60)) else {
            sample.failures.append("the periodic timer stopped ticking")
            return sample
        }
        disposable.dispose()
        let lateness = times.all.enumerated().map { index, time in time - (origin + Int64(index) * interval) }
        let percentiles = Percentiles(lateness)
        sample.metrics["last-tick drift ms"] = Double(lateness.last ?? 0) / 1e6
        sample.metrics["tick p50 µs"] = Double(percentiles.value(at: 0.5)) / 1e3
        sample.metrics["tick p99 µs"] = Double(percentiles.value(at: 0.99)) / 1e3
        sample.lateness = lateness
        if percentiles.min < 0 { sample.failures.append("a tick started \(-percentiles.min) ns before its grid point") }
        return sample
    }

    private static func lateness(_ target: RunningTarget, _ n: Int, seed: UInt64) -> Sample {
        var generator = SplitMix(seed: seed)
        let delays = (0..<n).map { _ in Int64(generator.next() % 2_000_000_000) }
        let due = Slots(count: n)
        let fired = Slots(count: n)
        let countdown = Countdown(n)
        let scheduler = target.scheduler
        let burstEnd = Atomic<Int64>(0)
        target.onScheduler {
            for (index, delay) in delays.enumerated() {
                due.set(index, Measure.now() + delay)
                scheduler.schedule(after: .nanoseconds(delay)) {
                    fired.set(index, Measure.now())
                    countdown.tick()
                }
            }
            burstEnd.store(Measure.now(), ordering: .relaxed)
        }
        var sample = Sample()
        guard countdown.wait(timeout: .seconds(120)) else {
            sample.failures.append("\(countdown.left) of \(n) timers never fired")
            return sample
        }
        let end = burstEnd.load(ordering: .relaxed)
        let dues = due.all
        let fires = fired.all
        var afterBurst: [Int64] = []
        var early = 0
        for index in 0..<n {
            let lateness = fires[index] - dues[index]
            if lateness < 0 { early += 1 }
            if dues[index] > end { afterBurst.append(lateness) }
        }
        let percentiles = Percentiles(afterBurst)
        sample.metrics["p50 µs"] = Double(percentiles.value(at: 0.5)) / 1e3
        sample.metrics["p99 µs"] = Double(percentiles.value(at: 0.99)) / 1e3
        sample.metrics["p99.9 µs"] = Double(percentiles.value(at: 0.999)) / 1e3
        sample.metrics["max µs"] = Double(percentiles.max) / 1e3
        sample.metrics["early"] = Double(early)
        sample.lateness = afterBurst
        if early > 0 { sample.failures.append("\(early) timers fired early") }
        return sample
    }

    private static func pendingMemory(_ target: RunningTarget, _ n: Int) -> Sample {
        let fired = Atomic<Int>(0)
        let scheduler = target.scheduler
        Measure.trimHeap()
        target.roundTrip()
        var disposables: [any Disposable] = []
        disposables.reserveCapacity(n)
        let baseline = Measure.heapBytesInUse()
        for _ in 0..<n {
            disposables.append(scheduler.schedule(after: .seconds(3600)) { fired.add(1, ordering: .relaxed) })
        }
        target.roundTrip()
        let perTimer = Double(Measure.heapBytesInUse() - baseline) / Double(n)
        for disposable in disposables { disposable.dispose() }
        target.roundTrip()
        var sample = Sample()
        sample.metrics["bytes/timer"] = perTimer
        let firedCount = fired.load(ordering: .relaxed)
        if firedCount > 0 { sample.failures.append("\(firedCount) pending timers fired") }
        return sample
    }
}
#endif
