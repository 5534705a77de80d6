import Foundation

@_spi(Workloads)
extension Workloads {
    /// `sleep-cancel`: the "sleep that is almost always cancelled" pattern (a retry back-off, an
    /// idle timeout). `n` pool tasks each `sleep`, then all are cancelled. The time is that of
    /// starting them plus that of cancelling them until every one ended; the pause between, while
    /// they sleep, is not counted in the time but is in the CPU (which is idle then).
    /// `iterations` reads a loop's iteration count: how often starting and cancelling woke it (the
    /// pause between and `settle` not counted). `start` starts each task: detached (the pool), or
    /// preferring a loop (`task-sleep-cancel`), where a plain `Task.sleep` is the loop's timer
    /// with the trait `ExperimentalExecutors`.
    public static func sleepCancel(
        _ n: Int,
        start starter: some TaskStarter = .detached,
        sleep: @escaping @Sendable () async throws -> Void,
        settle: () -> Void,
        iterations: (() -> Int)? = nil
    ) throws(WorkloadTimeout) -> AsyncRun {
        let iterationsAtStart = iterations?() ?? 0
        let started = Countdown(n)
        let ended = Countdown(n)
        let woke = Tally()
        let baseline = Measure.heapBytesInUse()
        let cpu = Measure.processCPUSeconds()
        let start = Measure.now()
        var tasks: [Task<Void, Never>] = []
        tasks.reserveCapacity(n)
        for _ in 0..<n {
            tasks.append(
                starter.start {
                    started.tick()
                    do {
                        try await sleep()
                        woke.add()
                    } catch {}
                    ended.tick()
                }
            )
        }
        guard started.wait(timeout: .seconds(120)) else {
            throw WorkloadTimeout("\(started.left) of \(n) tasks never started")
        }
        let startPhase = started.finishedAt.load(ordering: .acquiring) - start
        var loopIterations = (iterations?() ?? 0) - iterationsAtStart
        // A task counted as started may still be on its way into the sleep: let the last few arrive,
        // so that every cancellation finds a pending timer.
        Thread.sleep(forTimeInterval: 0.05)
        let cancelStart = Measure.now()
        let iterationsBeforeCancel = iterations?() ?? 0
        for task in tasks { task.cancel() }
        guard ended.wait(timeout: .seconds(120)) else {
            throw WorkloadTimeout("\(ended.left) of \(n) cancelled sleeps never ended")
        }
        let cancelPhase = ended.finishedAt.load(ordering: .acquiring) - cancelStart
        if let iterations { loopIterations += iterations() - iterationsBeforeCancel }
        tasks.removeAll()
        settle()
        let held = Measure.heapBytesInUse() - baseline
        return AsyncRun(
            nanosecondsPerOperation: Double(startPhase + cancelPhase) / Double(n),
            cpuSeconds: Measure.processCPUSeconds() - cpu,
            heldBytes: held,
            loopIterations: iterations == nil ? nil : loopIterations,
            failedOperations: woke.count
        )
    }
}
