import Scheduling
import Synchronization

/// What one order of `timers-cancel` measured.
@_spi(Workloads)
public typealias TimersCancelRun = (
    /// Scheduling all the timers and cancelling them, per timer.
    nanosecondsPerPair: Double,
    /// Heap bytes the pending timers held (0 unless the harness reads the peak).
    peakBytes: Int,
    /// Heap bytes still held after the cancellations and a round trip (may be negative).
    heldBytes: Int,
    /// Cancelled timers whose cancellation the system did not confirm (``WorkloadSystem/confirmsCancelled(_:)``,
    /// asked once the clock stopped; must be 0).
    unconfirmed: Int
)

@_spi(Workloads)
extension Workloads {
    /// `timers-cancel`, one order: an action on the system schedules `order.count` timers 30 s
    /// out, then cancels them in `order` (indices into the scheduling order). The heap held
    /// afterwards is read once `settle` returned (nil: a round trip through the system; a loop
    /// that gives memory back when it goes quiet wants its next iteration too, or the reading
    /// races it).
    @inlinable
    public static func timersCancel<System: WorkloadSystem>(
        _ system: System,
        order: [Int],
        harness: TimerHarness,
        settle: (() -> Void)? = nil
    ) -> TimersCancelRun {
        let n = order.count
        if harness.trimsHeap {
            Measure.trimHeap()
            system.roundTrip()
        }
        let baseline = Measure.heapBytesInUse()
        let result = Mutex<(perPair: Double, peak: Int, unconfirmed: Int)>((0, 0, 0))
        system.onScheduler {
            var timers: [System.TimerHandle] = []
            timers.reserveCapacity(n)
            let arrayBytes = harness.readsPeakHeap ? Measure.heapBytesInUse() : 0
            let start = Measure.now()
            for _ in 0..<n {
                timers.append(harness.neverFiring(system, afterNanoseconds: 30_000_000_000))
            }
            let peak = harness.readsPeakHeap ? Measure.heapBytesInUse() - arrayBytes : 0
            for index in order { system.cancel(timers[index]) }
            let elapsed = Measure.now() - start
            let unconfirmed = timers.count { system.confirmsCancelled($0) == false }
            result.withLock { $0 = (Double(elapsed) / Double(n), peak, unconfirmed) }
        }
        if let settle { settle() } else { system.roundTrip() }
        let held = Measure.heapBytesInUse() - baseline
        let (perPair, peak, unconfirmed) = result.withLock { $0 }
        return (nanosecondsPerPair: perPair, peakBytes: peak, heldBytes: held, unconfirmed: unconfirmed)
    }

    /// `pending-memory`: heap bytes per pending timer with `n` pending (an hour out, scheduled
    /// from the calling thread; the harness's array of handles not counted), then all cancelled.
    @inlinable
    public static func pendingMemory<System: WorkloadSystem>(
        _ system: System,
        _ n: Int,
        harness: TimerHarness
    ) -> Double {
        bytesPerPending(
            n,
            harness: harness,
            roundTrip: system.roundTrip,
            arm: { harness.neverFiring(system, afterNanoseconds: 3_600_000_000_000) },
            cancel: system.cancel
        )
    }

    /// `pending-memory` for handler timers (what `sleep`, `withTimeout` and ticks schedule): heap
    /// bytes per pending timer with `n` pending an hour out on `system`'s scheduler, all with one
    /// shared handler, so the figure is the scheduler's own (a sleep adds its handler object), then
    /// all cancelled. `strayFires` counts handlers that ran.
    public static func pendingHandlerMemory(
        _ system: SchedulerSystem,
        _ n: Int,
        harness: TimerHarness,
        strayFires: Tally
    ) -> Double {
        let handler = CountingHandler(tally: strayFires)
        return bytesPerPending(
            n,
            harness: harness,
            roundTrip: system.roundTrip,
            arm: { system.scheduler.schedule(after: .seconds(3_600), leeway: .zero, handler: handler) },
            cancel: { $0.dispose() }
        )
    }

    /// Both `pending-memory` figures: heap bytes that `n` timers made by `arm` hold once the
    /// scheduler took them in (the array of handles made before the baseline), then each given to
    /// `cancel` and the scheduler given a round trip to drop them.
    @inlinable
    static func bytesPerPending<Handle>(
        _ n: Int,
        harness: TimerHarness,
        roundTrip: () -> Void,
        arm: () -> Handle,
        cancel: (Handle) -> Void
    ) -> Double {
        if harness.trimsHeap { Measure.trimHeap() }
        roundTrip()
        var timers: [Handle] = []
        timers.reserveCapacity(n)
        let baseline = Measure.heapBytesInUse()
        for _ in 0..<n { timers.append(arm()) }
        roundTrip()
        let perTimer = Double(Measure.heapBytesInUse() - baseline) / Double(n)
        for timer in timers { cancel(timer) }
        roundTrip()
        return perTimer
    }
}
