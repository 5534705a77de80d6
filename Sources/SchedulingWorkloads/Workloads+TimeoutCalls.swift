@_spi(Workloads)
extension Workloads {
    /// `timeout`: a deadline per request, nearly all of them met (the design document, "Timeouts"). `n` `call`s
    /// in sequence from one task, as a request handler makes them: on the global pool, or on
    /// `executor` when given. Each must return 1. `iterations` reads a loop's iteration count: how
    /// often the calls made it wake up (`settle` not counted).
    public static func timeoutCalls(
        _ n: Int,
        on executor: (any TaskExecutor)? = nil,
        call: @escaping @Sendable () async throws -> Int,
        settle: () -> Void,
        iterations: (() -> Int)? = nil
    ) throws(WorkloadTimeout) -> AsyncRun {
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
        guard let run = AsyncBridge.value(of: task) else {
            throw WorkloadTimeout("\(n) calls did not finish within 300 s")
        }
        let loopIterations = iterations.map { $0() - (iterationsBefore ?? 0) }
        settle()
        let held = Measure.heapBytesInUse() - baseline
        return AsyncRun(
            nanosecondsPerOperation: Double(run.nanoseconds) / Double(n),
            cpuSeconds: Measure.processCPUSeconds() - cpu,
            heldBytes: held,
            loopIterations: loopIterations,
            failedOperations: n - run.returned
        )
    }
}
