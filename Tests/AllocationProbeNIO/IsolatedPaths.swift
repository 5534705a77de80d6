#if NIO
import AllocationCounting
import AllocationPaths
import Scheduling
import SchedulingNIO
@_spi(Workloads) import SchedulingWorkloads

/// A channel handler's own state, as an isolated action captures it: not `Sendable`.
private final class HandlerState {
    private var calls = 0
    private let tally: Tally

    init(counting tally: Tally) {
        self.tally = tally
    }

    /// An action as a handler writes one: a closure that captures the handler's state.
    func action() -> () -> Void {
        {
            self.calls += 1
            self.tally.add()
        }
    }
}

@available(*, unavailable)
extension HandlerState: Sendable {}

/// The isolated view's calls, as a channel handler makes them on the loop thread
/// (`scheduler.assumeIsolated()`): `schedule {}` + run, `schedule(after:)` + `dispose`, and
/// `scheduleRearmable(after:)` + `dispose`. Each batch makes its handler state and its action (a
/// closure capturing that state) once, and calls the scheduler inline, so the figures are the
/// scheduler's own, as in AllocationProbe's paths (an action passed on through a stored closure
/// would be re-abstracted, a malloc per call of the probe's own); the batch's own allocations
/// cancel against the baseline.
func isolatedPaths(_ scheduler: EventLoopScheduler, _ target: ProbeTarget, _ report: AllocationReport) {
    let ran = Tally()
    let strays = Tally()
    let pending = Handles<any Disposable>(capacity: operations / batches)
    let captures = "(a closure capturing non-Sendable state)"
    typealias Batch = @Sendable (_ isolated: EventLoopScheduler.Isolated, _ count: Int) -> Void
    let paths: [(operation: String, description: String, batch: Batch)] = [
        (
            "isolated-schedule+run",
            "assumeIsolated().schedule {} \(captures) from an action on the loop, and its run",
            { isolated, count in
                let action = HandlerState(counting: ran).action()
                for _ in 0..<count { isolated.schedule(action) }
            }
        ),
        (
            "isolated-schedule-after+dispose",
            "assumeIsolated().schedule(after: 30 s) {} \(captures) and dispose() from an action on the loop",
            { isolated, count in
                let stray = HandlerState(counting: strays).action()
                armAndDispose(count, in: pending) { isolated.schedule(after: .seconds(30), stray) }
            }
        ),
        (
            "isolated-rearmable+dispose",
            "assumeIsolated().scheduleRearmable(after: 30 s) {} \(captures) and dispose() from an action on the loop",
            { isolated, count in
                let stray = HandlerState(counting: strays).action()
                armAndDispose(count, in: pending) { isolated.scheduleRearmable(after: .seconds(30), stray) }
            }
        ),
    ]
    for path in paths {
        target.measure(report, path.operation, .own, path.description, operations: operations) { n in
            target.inBatches(n, batches: batches, on: .own) { count in
                path.batch(scheduler.assumeIsolated(), count)
            }
        }
    }
    let runPath = target.path("isolated-schedule+run", .own)
    report.expect(runPath, ran.count, of: AllocationReport.issued(operations), "actions ran")
    report.expect("\(target.name)/isolated-*", strays.count, of: 0, "timers fired after they were disposed")
}

/// `count` timers armed by `arm`, then disposed, their handles kept in `pending` meanwhile.
private func armAndDispose(_ count: Int, in pending: Handles<any Disposable>, _ arm: () -> any Disposable) {
    pending.items.withLock { timers in
        for _ in 0..<count { timers.append(arm()) }
        for each in timers { each.dispose() }
        timers.removeAll(keepingCapacity: true)
    }
}
#endif
