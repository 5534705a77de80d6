import Scheduling

/// What one task measured in `task-sleep`, `yield` or `spawn`: its operations ran one after another
/// in that task, wherever its ``TaskStarter`` put it.
@_spi(Workloads)
public struct TaskRun: Sendable {
    /// Time from the first operation's start to the last one's end.
    public var nanoseconds: Int64
    /// CPU time of the whole process over the same span.
    public var cpuSeconds: Double
    /// Operations that ended as they must: sleeps that returned normally, yields, child tasks that
    /// ran (must be the count asked for).
    public var completed: Int
    /// `task-sleep` only: for each sleep that returned normally, its wake time minus its deadline
    /// (ns; negative: early, which a sleep must never be). Empty for the others.
    public var lateness: [Int64]
    /// The task ran on `home` before the first operation and after the last.
    public var stayedHome: Bool
}

@_spi(Workloads)
extension Workloads {
    /// `task-sleep`: `n` sequential sleeps of `interval` in one task that `start` starts, each
    /// through `sleep` (`Task.sleep(for:)`, a scheduler's `sleep(for:)`). `home` is the scheduler
    /// the task must find itself on (nil: none), so a run cannot silently measure the wrong thread.
    /// Throws if the task did not finish within 300 s.
    public static func taskSleep(
        _ n: Int,
        interval: Duration = .milliseconds(1),
        start: some TaskStarter,
        home: (any Scheduler)?,
        sleep: @escaping @Sendable (Duration) async throws -> Void
    ) throws(WorkloadTimeout) -> TaskRun {
        try value(
            of: start.start { await sleepRepeatedly(n, interval: interval, home: home, sleep: sleep) },
            "task-sleep"
        )
    }

    /// `task-sleep` in the current task: `n` sleeps of `interval` one after another, each one's
    /// deadline `Measure.now()` before the call plus `interval`, its lateness the time it returned
    /// minus that deadline. `warmUp` sleeps go first, unmeasured: the first system measured in a
    /// process would otherwise pay the process's first use of the sleep path (metadata, lazy
    /// binding, the first allocations), which at 2,000 sleeps shows in the CPU per sleep.
    public static func sleepRepeatedly(
        _ n: Int,
        interval: Duration,
        warmUp: Int = 100,
        home: (any Scheduler)?,
        sleep: @Sendable (Duration) async throws -> Void
    ) async -> TaskRun {
        for _ in 0..<warmUp { try? await sleep(interval) }
        let startedHome = AsyncBridge.isCurrent(home)
        let step = Nanoseconds.of(interval)
        var lateness: [Int64] = []
        lateness.reserveCapacity(n)
        let cpu = Measure.processCPUSeconds()
        let start = Measure.now()
        for _ in 0..<n {
            let deadline = Measure.now() + step
            do {
                try await sleep(interval)
                lateness.append(Measure.now() - deadline)
            } catch {}
        }
        let elapsed = Measure.now() - start
        return TaskRun(
            nanoseconds: elapsed,
            cpuSeconds: Measure.processCPUSeconds() - cpu,
            completed: lateness.count,
            lateness: lateness,
            stayedHome: startedHome && AsyncBridge.isCurrent(home)
        )
    }

    /// `yield`: `n` sequential `Task.yield()`s in one task that `start` starts; `home` as in
    /// ``taskSleep(_:interval:start:home:sleep:)``.
    public static func yield(
        _ n: Int,
        start: some TaskStarter,
        home: (any Scheduler)?
    ) throws(WorkloadTimeout) -> TaskRun {
        try value(of: start.start { await yieldRepeatedly(n, home: home) }, "yield")
    }

    /// `yield` in the current task: each `Task.yield()` puts the task back on its executor's queue
    /// and runs it again.
    public static func yieldRepeatedly(_ n: Int, home: (any Scheduler)?) async -> TaskRun {
        let startedHome = AsyncBridge.isCurrent(home)
        let cpu = Measure.processCPUSeconds()
        let start = Measure.now()
        for _ in 0..<n { await Task.yield() }
        let elapsed = Measure.now() - start
        return TaskRun(
            nanoseconds: elapsed,
            cpuSeconds: Measure.processCPUSeconds() - cpu,
            completed: n,
            lateness: [],
            stayedHome: startedHome && AsyncBridge.isCurrent(home)
        )
    }

    /// `spawn`: `n` empty child tasks of one task that `start` starts; `home` as in
    /// ``taskSleep(_:interval:start:home:sleep:)``. See ``spawnChildren(_:batch:home:)``.
    public static func spawn(
        _ n: Int,
        batch: Int = spawnBatch,
        start: some TaskStarter,
        home: (any Scheduler)?
    ) throws(WorkloadTimeout) -> TaskRun {
        try value(of: start.start { await spawnChildren(n, batch: batch, home: home) }, "spawn")
    }

    /// Child tasks `spawn` starts before it waits for them.
    public static let spawnBatch = 1_000

    /// `spawn` in the current task: `n` child tasks that only count themselves, started in task
    /// groups of `batch` (a discarding group each, awaited before the next). The children of a
    /// task group inherit the task's executor preference (a task preferring a loop spawns on the
    /// loop) and otherwise run on the default executor, the program's own when it declares a
    /// `DefaultExecutorFactory`. The batches keep at most `batch` children alive at once, so the
    /// figure is the steady cost of starting, running and ending one, not the memory of `n` at once.
    public static func spawnChildren(_ n: Int, batch: Int, home: (any Scheduler)?) async -> TaskRun {
        if batch < 1 { fatalError("Workloads.spawnChildren: batch must be positive (got \(batch))") }
        let startedHome = AsyncBridge.isCurrent(home)
        let ran = Tally()
        let cpu = Measure.processCPUSeconds()
        let start = Measure.now()
        var left = n
        while left > 0 {
            let count = min(batch, left)
            await withDiscardingTaskGroup { group in
                for _ in 0..<count { group.addTask { ran.add() } }
            }
            left -= count
        }
        let elapsed = Measure.now() - start
        return TaskRun(
            nanoseconds: elapsed,
            cpuSeconds: Measure.processCPUSeconds() - cpu,
            completed: ran.count,
            lateness: [],
            stayedHome: startedHome && AsyncBridge.isCurrent(home)
        )
    }

    /// The task's value, or a timeout naming `workload` if it did not finish within 300 s.
    private static func value(of task: Task<TaskRun, Never>, _ workload: String) throws(WorkloadTimeout) -> TaskRun {
        guard let run = AsyncBridge.value(of: task) else {
            throw WorkloadTimeout("\(workload)'s task did not finish within 300 s")
        }
        return run
    }
}
