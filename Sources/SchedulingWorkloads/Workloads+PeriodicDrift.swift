import Synchronization

@_spi(Workloads)
extension Workloads {
    /// `periodic-drift`: a 10 ms periodic timer for `ticks` ticks, cancelled from its last one.
    /// Returns each tick's lateness (ns) against the fixed-rate grid `start + (k + 1)·10 ms`,
    /// `start` read just before the timer is scheduled.
    @inlinable
    public static func periodicDrift<System: WorkloadSystem>(
        _ system: System,
        ticks: Int,
        harness: TimerHarness
    ) throws(WorkloadTimeout) -> [Int64] {
        let interval: Int64 = 10_000_000
        let times = Slots(count: ticks)
        let count = Atomic<Int>(0)
        let countdown = Countdown(1)
        let slot = Mutex<System.TimerHandle?>(nil)
        let origin = Atomic<Int64>(0)
        let start: @Sendable () -> Void = {
            origin.store(Measure.now() + interval, ordering: .relaxed)
            let timer = system.scheduleRepeating(everyNanoseconds: interval) {
                let index = count.add(1, ordering: .relaxed).newValue - 1
                guard index < ticks else { return }
                times.set(index, Measure.now())
                if index == ticks - 1 {
                    slot.withLock { timer in timer.map(system.cancel) }
                    countdown.tick()
                }
            }
            slot.withLock { $0 = timer }
        }
        if harness.startsPeriodicOnScheduler { system.onScheduler(start) } else { start() }
        guard countdown.wait(timeout: .seconds(Int64(ticks) / 10 + 60)) else {
            throw WorkloadTimeout("the periodic timer stopped ticking")
        }
        slot.withLock { timer in timer.map(system.cancel) }
        let first = origin.load(ordering: .relaxed)
        return times.all.enumerated().map { index, time in time - (first + Int64(index) * interval) }
    }
}
