import AllocationCounting
import AllocationPaths
import Scheduling
@_spi(Workloads) import SchedulingWorkloads

/// `TestScheduler.advance(by:)` over 16 timers at a time: each timer's `schedule(after:)` and its
/// run inside `advance`, on the probe's thread.
func testSchedulerPath(_ report: AllocationReport) {
    let test = TestScheduler()
    let ran = Tally()
    let action: @Sendable () -> Void = { ran.add() }
    report.measure(
        "test/schedule-after+advance",
        "TestScheduler: schedule(after:) {} of 16 timers, then advance(by:) over them",
        operations: operations,
        countsLoopThread: false
    ) { n in
        let count = n / batches
        for _ in 0..<batches {
            for index in 0..<count { test.schedule(after: .nanoseconds(index + 1), action) }
            test.advance(by: .nanoseconds(count + 1))
        }
    }
    report.expect("test/schedule-after+advance", ran.count, of: AllocationReport.issued(operations), "actions ran")
}
