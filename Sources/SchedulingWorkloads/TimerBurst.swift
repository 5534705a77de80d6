import Synchronization

/// What `timers-fire` measured.
@_spi(Workloads)
public typealias TimersFireRun = (
    /// Scheduling the burst, per timer.
    nanosecondsPerSchedule: Double,
    /// From the burst's start until the last timer fired (ideally the largest delay).
    wallSeconds: Double,
    /// CPU time of the whole process over the run.
    cpuSeconds: Double,
    /// Timers that fired before their delay had passed (must be 0).
    early: Int,
    /// Fires beyond one per timer, counted once the last was seen and the system made a round
    /// trip (must be 0).
    extra: Int
)

/// What `lateness` measured.
@_spi(Workloads)
public typealias LatenessRun = (
    /// Lateness (ns) of each timer due after the scheduling burst ended, in scheduling order.
    afterBurst: [Int64],
    /// Timers of the whole burst that fired before they were due (must be 0).
    early: Int,
    /// Timers that never fired although the burst saw as many fires as timers (must be 0).
    missing: Int,
    /// Fires beyond one per timer, as for `timers-fire` (must be 0).
    extra: Int
)

/// A burst of one-shot timers, one per delay (nanoseconds, the caller's draw), scheduled by an
/// action on the system: `timers-fire` and `lateness`.
@_spi(Workloads)
public struct TimerBurst: Sendable {
    /// One timer per delay, in scheduling order.
    public let delays: [Int64]

    /// A burst of `delays.count` timers.
    public init(delays: [Int64]) {
        self.delays = delays
    }

    /// `timers-fire`: each timer checks it did not fire early.
    @inlinable
    public func fire<System: WorkloadSystem>(on system: System) throws(WorkloadTimeout) -> TimersFireRun {
        let countdown = Countdown(delays.count)
        let early = Atomic<Int>(0)
        let timing = Mutex<(start: Int64, scheduled: Int64)>((0, 0))
        let cpuBefore = Measure.processCPUSeconds()
        system.onScheduler { [delays] in
            let start = Measure.now()
            for delay in delays {
                // `start + delay` is a lower bound of each timer's due time.
                let due = start + delay
                _ = system.schedule(afterNanoseconds: delay) {
                    if Measure.now() < due { early.add(1, ordering: .relaxed) }
                    countdown.tick()
                }
            }
            timing.withLock { $0 = (start, Measure.now()) }
        }
        try Self.waitForTimers(countdown, delays.count)
        let cpuSeconds = Measure.processCPUSeconds() - cpuBefore
        let (start, scheduled) = timing.withLock { $0 }
        return (
            nanosecondsPerSchedule: Double(scheduled - start) / Double(delays.count),
            wallSeconds: Double(countdown.finishedAt.load(ordering: .acquiring) - start) / 1e9,
            cpuSeconds: cpuSeconds,
            early: early.load(ordering: .relaxed),
            extra: Self.extraFires(countdown, on: system)
        )
    }

    /// `lateness`: each timer's due time is noted as it is scheduled; the lateness of those due
    /// after the burst ended, when the system is no longer busy scheduling.
    @inlinable
    public func lateness<System: WorkloadSystem>(on system: System) throws(WorkloadTimeout) -> LatenessRun {
        let due = Slots(count: delays.count)
        let fired = Slots(count: delays.count)
        let countdown = Countdown(delays.count)
        let burstEnd = Atomic<Int64>(0)
        system.onScheduler { [delays] in
            for (index, delay) in delays.enumerated() {
                due.set(index, Measure.now() + delay)
                _ = system.schedule(afterNanoseconds: delay) {
                    fired.set(index, Measure.now())
                    countdown.tick()
                }
            }
            burstEnd.store(Measure.now(), ordering: .relaxed)
        }
        try Self.waitForTimers(countdown, delays.count)
        let extra = Self.extraFires(countdown, on: system)
        let end = burstEnd.load(ordering: .relaxed)
        let dues = due.all
        let fires = fired.all
        var afterBurst: [Int64] = []
        var early = 0
        var missing = 0
        for index in dues.indices {
            guard fires[index] != .min else {
                missing += 1
                continue
            }
            let lateness = fires[index] - dues[index]
            if lateness < 0 { early += 1 }
            if dues[index] > end { afterBurst.append(lateness) }
        }
        return (afterBurst: afterBurst, early: early, missing: missing, extra: extra)
    }

    /// Fires past the countdown's end: read after a round trip through the system, so fires the
    /// system had already queued behind the last one are counted.
    @usableFromInline
    static func extraFires<System: WorkloadSystem>(_ countdown: Countdown, on system: System) -> Int {
        system.roundTrip()
        return max(0, -countdown.left)
    }

    @usableFromInline
    static func waitForTimers(_ countdown: Countdown, _ n: Int) throws(WorkloadTimeout) {
        guard countdown.wait(timeout: .seconds(120)) else {
            throw WorkloadTimeout("\(countdown.left) of \(n) timers never fired")
        }
    }
}
