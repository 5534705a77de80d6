import Scheduling

/// An actor with one cheap method, so a call costs the hop and nothing else.
@_spi(Workloads)
public protocol HopTarget: Actor {
    /// Counts the call; returns the count so far.
    func hop() -> Int
}

/// An actor whose executor is a scheduler or an event loop (the design document, "Executors"): every call from
/// elsewhere is a job on it.
@_spi(Workloads)
public actor PinnedCounter<Executor: SerialExecutor>: HopTarget {
    private let executor: Executor
    private var calls = 0

    /// An actor whose every job runs on `executor`.
    public init(on executor: Executor) {
        self.executor = executor
    }

    /// `executor`, so the runtime runs the actor's jobs there.
    public nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    /// Counts the call.
    public func hop() -> Int {
        calls += 1
        return calls
    }
}

/// The runtime's default actor: the baseline.
@_spi(Workloads)
public actor PlainCounter: HopTarget {
    private var calls = 0

    /// A default actor at zero calls.
    public init() {}

    /// Counts the call.
    public func hop() -> Int {
        calls += 1
        return calls
    }
}

/// One caller's figures in `actor-hop`.
@_spi(Workloads)
public typealias HopRun = (
    nanoseconds: Int64,
    /// CPU time of the whole process while the caller made its calls.
    cpuSeconds: Double,
    /// The caller ran on `home` before the first call and after the last.
    stayedHome: Bool
)

@_spi(Workloads)
extension Workloads {
    /// `actor-hop`, one caller: `n` awaited calls to `target` from a pool task, or from a task
    /// preferring `executor` (nonisolated code then runs there, as the actor does). `home` is the
    /// scheduler that caller must find itself on (nil: none), so a run cannot silently measure
    /// the wrong thread. Nil if the calls did not finish within 300 s. Inlinable with
    /// ``callRepeatedly(_:_:home:)``.
    @inlinable
    public static func actorHop<Target: HopTarget>(
        to target: Target,
        _ n: Int,
        preferring executor: (any TaskExecutor)?,
        home: (any Scheduler)?
    ) -> HopRun? {
        let body: @Sendable () async -> HopRun = { await callRepeatedly(target, n, home: home) }
        let task = executor.map { Task(executorPreference: $0, operation: body) } ?? Task.detached(operation: body)
        return AsyncBridge.value(of: task)
    }

    /// `n` awaited calls from wherever the current task runs. Nonisolated, so it runs on the
    /// task's executor preference if it has one, else on the global pool. Inlinable, so the calls
    /// are specialised for the caller's actor type.
    @inlinable
    public static func callRepeatedly<Target: HopTarget>(
        _ target: Target,
        _ n: Int,
        home: (any Scheduler)?
    ) async -> HopRun {
        let startedHome = AsyncBridge.isCurrent(home)
        let cpu = Measure.processCPUSeconds()
        let start = Measure.now()
        for _ in 0..<n { _ = await target.hop() }
        let elapsed = Measure.now() - start
        return (
            nanoseconds: elapsed,
            cpuSeconds: Measure.processCPUSeconds() - cpu,
            stayedHome: startedHome && AsyncBridge.isCurrent(home)
        )
    }
}
