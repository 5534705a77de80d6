/// How a workload starts the task it measures in: where that task's jobs run is the system being
/// measured. The async task workloads (``Workloads/taskSleep(_:interval:start:home:sleep:)`` and the
/// others of `Workloads+TaskSleep.swift`, and ``Workloads/sleepCancel(_:start:sleep:settle:iterations:)``)
/// are generic over it, so `loopsched` can run them in a task preferring a loop or on Swift's default
/// executor, and a program with an executor factory of its own can run the same bodies in plain
/// `Task {}`s (``PlainTaskStarter``).
@_spi(Workloads)
public protocol TaskStarter: Sendable {
    /// Starts `operation` as a new unstructured task.
    func start<Success: Sendable>(_ operation: @escaping @Sendable () async -> Success) -> Task<Success, Never>
}

/// `Task.detached { … }`: no actor, no executor preference, so the task runs on Swift's default
/// executor (Dispatch's cooperative pool, or a program's `DefaultExecutorFactory`'s).
@_spi(Workloads)
public struct DetachedTaskStarter: TaskStarter {
    /// The starter of detached tasks.
    public init() {}

    /// Starts `operation` detached.
    public func start<Success: Sendable>(_ operation: @escaping @Sendable () async -> Success) -> Task<Success, Never> {
        Task.detached(operation: operation)
    }
}

/// `Task { … }`: as the program's own code starts a task. From the workloads' nonisolated code it
/// runs where a detached task does, but inherits the caller's priority and task-local values.
@_spi(Workloads)
public struct PlainTaskStarter: TaskStarter {
    /// The starter of plain tasks.
    public init() {}

    /// Starts `operation` as `Task { … }`.
    public func start<Success: Sendable>(_ operation: @escaping @Sendable () async -> Success) -> Task<Success, Never> {
        Task { await operation() }
    }
}

/// `Task(executorPreference: executor) { … }`: the task's nonisolated code, and its task-group
/// children, run on `executor` (a `LoopScheduler`: on the loop thread).
@_spi(Workloads)
public struct PreferringTaskStarter: TaskStarter {
    /// The executor the tasks prefer.
    public let executor: any TaskExecutor

    /// The starter of tasks preferring `executor`.
    public init(_ executor: any TaskExecutor) {
        self.executor = executor
    }

    /// Starts `operation` preferring the executor.
    public func start<Success: Sendable>(_ operation: @escaping @Sendable () async -> Success) -> Task<Success, Never> {
        Task(executorPreference: executor, operation: operation)
    }
}

@_spi(Workloads)
extension TaskStarter where Self == DetachedTaskStarter {
    /// `Task.detached { … }`.
    public static var detached: DetachedTaskStarter { DetachedTaskStarter() }
}

@_spi(Workloads)
extension TaskStarter where Self == PlainTaskStarter {
    /// `Task { … }`.
    public static var plain: PlainTaskStarter { PlainTaskStarter() }
}

@_spi(Workloads)
extension TaskStarter where Self == PreferringTaskStarter {
    /// `Task(executorPreference: executor) { … }`.
    public static func preferring(_ executor: any TaskExecutor) -> PreferringTaskStarter {
        PreferringTaskStarter(executor)
    }
}
