#if NIO
import AllocationCounting
import AllocationPaths
import Dispatch
import Scheduling
@_spi(Workloads) import SchedulingWorkloads
import Synchronization

/// The fires of one batch of the fire paths: every timer runs ``fire()``, and the batch's last
/// fire wakes the probe's thread.
private final class FireGate: Sendable {
    let fired = Tally()
    private let remaining = Atomic<Int>(0)
    private let done = DispatchSemaphore(value: 0)

    /// The next batch: `count` fires.
    func expect(_ count: Int) {
        remaining.store(count, ordering: .sequentiallyConsistent)
    }

    func fire() {
        fired.add()
        if remaining.subtract(1, ordering: .sequentiallyConsistent).newValue == 0 { done.signal() }
    }

    /// Whether the batch's fires came within 60 s.
    func wait() -> Bool {
        done.wait(timeout: .now() + .seconds(60)) == .success
    }
}

/// A one-shot timer's fire: `schedule(after: 1 µs)` of a closure made beforehand, its handle
/// dropped at once, and its fire — on the loop's thread and from another thread. The figure is
/// the timer's own entry (allocated by the scheduling thread unless the loop has one spare) and
/// whatever the fire adds: the wake-up the scheduler arms for it, the batch that runs it.
func firePaths(_ target: ProbeTarget, _ report: AllocationReport) {
    let scheduler = target.scheduler
    let gate = FireGate()
    let fire: @Sendable () -> Void = { gate.fire() }
    for side in [Side.own, .other] {
        let path = target.path("fire", side)
        let firedBefore = gate.fired.count
        let description = "schedule(after: 1 µs) {} \(target.issued(side)), its handle dropped, and its fire"
        target.measure(report, "fire", side, description, operations: operations) { n in
            let count = n / batches
            for _ in 0..<batches {
                gate.expect(count)
                let arm: @Sendable () -> Void = {
                    for _ in 0..<count { _ = scheduler.schedule(after: .microseconds(1), fire) }
                }
                switch side {
                case .own: target.onScheduler(arm)
                case .other: arm()
                }
                if !gate.wait() { report.fail("\(path): a batch's timers did not fire within 60 s") }
                // The loop has finished the batch that ran the last fire.
                target.roundTrip()
            }
        }
        report.expect(path, gate.fired.count - firedBefore, of: AllocationReport.issued(operations), "timers fired")
    }
}
#endif
