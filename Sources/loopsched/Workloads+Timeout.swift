#if CommandLineTool
import LoopScheduling
import Scheduling

/// `timeout`: a deadline per request, nearly all of them met (Docs/Design.md §8.5). The baseline is what
/// people write without a scheduler: a task group racing the operation against `Task.sleep`. Its
/// cancelled sleep stays queued until its deadline, which the held-memory figure shows.
extension AsyncWorkload {
    static func timeout(on system: AsyncSystem, _ n: Int, driver: TimerDriverKind) throws -> Sample {
        let limit = Duration.seconds(30)
        switch system {
        case .loop:
            let loop = try makeLoop(driver)
            defer { loop.shutdown() }
            return calls(
                n,
                call: { try await loop.withTimeout(limit) { 1 } },
                settle: { AsyncBridge.roundTrip(loop) },
                iterations: { loop.statistics.loopIterations }
            )
        case .loopCaller:
            let loop = try makeLoop(driver)
            defer { loop.shutdown() }
            return calls(
                n,
                on: loop,
                call: { try await loop.withTimeout(limit) { 1 } },
                settle: { AsyncBridge.roundTrip(loop) },
                iterations: { loop.statistics.loopIterations }
            )
        case .queue:
            let queue = makeQueue()
            return calls(
                n,
                call: { try await queue.withTimeout(limit) { 1 } },
                settle: { AsyncBridge.roundTrip(queue) }
            )
        case .taskGroupRace:
            return calls(n, call: { try await raceTaskSleep(limit) { 1 } }, settle: {})
        default:
            preconditionFailure("timeout does not run on \(system.displayName)")
        }
    }

    /// `n` calls in sequence from one task, as a request handler makes them: on the global pool,
    /// or on `executor` when given. `iterations` reads a loop's iteration count: how often the
    /// calls made it wake up, per thousand calls (the settling round trip not counted).
    private static func calls(
        _ n: Int,
        on executor: (any TaskExecutor)? = nil,
        call: @escaping @Sendable () async throws -> Int,
        settle: () -> Void,
        iterations: (() -> Int)? = nil
    ) -> Sample {
        var sample = Sample()
        let iterationsBefore = iterations?()
        let baseline = Measure.heapBytesInUse()
        let cpu = Measure.processCPUSeconds()
        let body: @Sendable () async -> (nanoseconds: Int64, returned: Int) = {
            let start = Measure.now()
            var returned = 0
            for _ in 0..<n {
                if (try? await call()) == 1 { returned += 1 }
            }
            return (Measure.now() - start, returned)
        }
        let task = executor.map { Task(executorPreference: $0, operation: body) } ?? Task.detached(operation: body)
        let run = AsyncBridge.value(of: task)
        guard let run else {
            sample.failures.append("\(n) calls did not finish within 300 s")
            return sample
        }
        if let iterations, let iterationsBefore {
            sample.metrics["loop iter/1k"] = Double(iterations() - iterationsBefore) * 1_000 / Double(n)
        }
        settle()
        let held = Measure.heapBytesInUse() - baseline
        sample.metrics["ns/call"] = Double(run.nanoseconds) / Double(n)
        sample.metrics["cpu ns/call"] = (Measure.processCPUSeconds() - cpu) * 1e9 / Double(n)
        sample.metrics["held MB after"] = Double(max(0, held)) / 1e6
        if run.returned != n { sample.failures.append("\(n - run.returned) of \(n) calls did not return the value") }
        return sample
    }
}

/// The hand-written timeout: the operation and a sleep-then-throw in a task group; the first to
/// finish wins and the other is cancelled.
func raceTaskSleep<T: Sendable>(
    _ timeout: Duration,
    _ operation: @escaping @Sendable () async throws -> T
) async throws -> T {
    try await withThrowingTaskGroup(of: T.self) { group in
        group.addTask { try await operation() }
        group.addTask {
            try await Task.sleep(for: timeout)
            throw TimeoutError(timeout: timeout)
        }
        let first = try await group.next()!
        group.cancelAll()
        return first
    }
}
#endif
