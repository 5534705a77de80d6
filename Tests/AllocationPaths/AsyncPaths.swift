import AllocationCounting
import Scheduling
@_spi(Workloads) import SchedulingWorkloads

/// Operations per measurement of the async paths (the cancelled sleeps: half of it, each a task
/// of its own and two round trips; the timeouts that fire: a quarter, 2 ms each).
public let asyncOperations = 128

/// The paths a task takes on `target`: a task started on it, `sleep(for:)` completed and cancelled,
/// `withTimeout` (the operation wins; the timeout wins) and a call to an actor pinned to it. Each
/// runs in one task started for the measurement, so the task's own allocations cancel against the
/// baseline and the figure is what the operations add, unless the description says otherwise.
public func asyncPaths(_ target: ProbeTarget, _ report: AllocationReport) {
    taskPath(target, report)
    for side in [Side.own, .other] {
        sleepPaths(target, side, report)
        timeoutPaths(target, side, report)
        let caller = side == .own ? "preferring the \(target.place)" : "on the global pool"
        let description = "an awaited call to an actor whose executor is the \(target.place), from a task \(caller)"
        target.measure(report, "actor-call", side, description, operations: asyncOperations) { n in
            let preferring = side == .own ? target.executor : nil
            if Workloads.actorHop(to: target.pinned, n, preferring: preferring, home: nil) == nil {
                report.fail("\(target.path("actor-call", side)): the calls did not finish within 300 s")
            }
        }
    }
}

/// A task preferring the scheduler, started from another thread and run to its end: what a task
/// per operation adds to the async figures that exclude it.
private func taskPath(_ target: ProbeTarget, _ report: AllocationReport) {
    let finished = Tally()
    let body: @Sendable () async -> Void = { finished.add() }
    let description = "Task(executorPreference: \(target.place)) {} started from another thread and run to its end"
    target.measure(report, "task", nil, description, operations: operations) { n in
        target.inBatches(n, batches: batches, on: .other) { count in
            for _ in 0..<count { Task(executorPreference: target.executor, operation: body) }
        }
    }
    report.expect("\(target.name)/task", finished.count, of: AllocationReport.issued(operations), "tasks ran")
}

private func sleepPaths(_ target: ProbeTarget, _ side: Side, _ report: AllocationReport) {
    let scheduler = target.scheduler
    let caller = side == .own ? "preferring the \(target.place)" : "on the global pool"
    target.measure(
        report,
        "sleep",
        side,
        "sleep(for: 1 µs) to its end, in a task \(caller)",
        operations: asyncOperations
    ) {
        n in
        target.inTask(side, target.path("sleep", side), report) {
            for _ in 0..<n { try? await scheduler.sleep(for: .microseconds(1)) }
        }
    }

    // A cancelled sleep needs a task per sleep: each operation starts one preferring the
    // scheduler, waits until it sleeps (a round trip: the scheduler is serial), cancels it and
    // waits for its end; the baseline's tasks end at once instead of sleeping.
    let ended = Tally()
    let woke = Tally()
    let sleeper: @Sendable () async -> Void = {
        do {
            try await scheduler.sleep(for: .seconds(3_600))
            woke.add()
        } catch {}
        ended.add()
    }
    let quick: @Sendable () async -> Void = { ended.add() }
    let count = asyncOperations / 2
    func cancelled(_ body: @escaping @Sendable () async -> Void) {
        for _ in 0..<count {
            let task = Task(executorPreference: target.executor, operation: body)
            target.roundTrip()
            switch side {
            case .own: target.onScheduler { task.cancel() }
            case .other: task.cancel()
            }
            target.roundTrip()
        }
    }
    report.measure(
        target.path("sleep-cancelled", side),
        "sleep(for: 1 h) in a task preferring the \(target.place), the task cancelled "
            + (side == .own ? "from an action on it" : "from another thread")
            + " (the task's own allocations excluded)",
        operations: count,
        countsLoopThread: target.countsLoopThread,
        baseline: { cancelled(quick) },
        run: { cancelled(sleeper) }
    )
    report.expect(
        target.path("sleep-cancelled", side),
        ended.count,
        of: 2 * AllocationReport.runs * count,
        "tasks ended"
    )
    report.expect(target.path("sleep-cancelled", side), woke.count, of: 0, "sleeps woke")
}

private func timeoutPaths(_ target: ProbeTarget, _ side: Side, _ report: AllocationReport) {
    let scheduler = target.scheduler
    let caller = side == .own ? "preferring the \(target.place)" : "on the global pool"
    let answer: @Sendable () async throws -> Int = { 1 }
    let answered = Tally()
    let completes = "withTimeout(30 s) { 1 } in a task \(caller) (its child task included)"
    target.measure(report, "timeout-completes", side, completes, operations: asyncOperations) { n in
        target.inTask(side, target.path("timeout-completes", side), report) {
            for _ in 0..<n where (try? await scheduler.withTimeout(.seconds(30), answer)) == 1 { answered.add() }
        }
    }
    let issued = AllocationReport.issued(asyncOperations)
    report.expect(target.path("timeout-completes", side), answered.count, of: issued, "calls returned 1")

    // The operation sleeps until cancelled. On the loop it starts before the timer can fire (the
    // loop runs its local queue first); elsewhere the 2 ms leave it time to: a caller stalled
    // longer between arming the timer and starting the child would see the child start
    // cancelled, skip its sleep, and count two mallocs fewer, a few hundredths per operation.
    let timedOut = Tally()
    let slow: @Sendable () async throws -> Int = {
        try await scheduler.sleep(for: .seconds(3_600))
        return 1
    }
    let fires =
        "withTimeout(2 ms) { try await sleep(for: 1 h) } in a task \(caller), TimeoutError thrown "
        + "(its child task and the cancelled sleep included)"
    target.measure(report, "timeout-fires", side, fires, operations: asyncOperations / 4) { n in
        target.inTask(side, target.path("timeout-fires", side), report) {
            for _ in 0..<n {
                do {
                    _ = try await scheduler.withTimeout(.milliseconds(2), slow)
                } catch is TimeoutError {
                    timedOut.add()
                } catch {}
            }
        }
    }
    let fired = AllocationReport.issued(asyncOperations / 4)
    report.expect(target.path("timeout-fires", side), timedOut.count, of: fired, "calls threw TimeoutError")
}
