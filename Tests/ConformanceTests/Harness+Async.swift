import Foundation
import LoopScheduling
import LoopSchedulingTestSupport
import Scheduling
import Testing

#if NIO
import SchedulingNIO
#endif

extension SchedulerKind {
    /// Schedulers that are `SerialExecutor`s (rules 10.x for actors).
    static let serialExecutors: [SchedulerKind] = [.queue, .test] + loops + async(allCases.filter(nioLoops.contains))
    /// Schedulers that are `TaskExecutor`s.
    static let taskExecutors: [SchedulerKind] = [.queue, .concurrentQueue, .test] + loops + async(allCases.filter(nioLoops.contains))
}

extension Harness {
    /// The scheduler as an actor's executor, for kinds in ``SchedulerKind/serialExecutors``.
    var serialExecutor: any SerialExecutor { scheduler as! any SerialExecutor }

    /// The scheduler as a task executor, for kinds in ``SchedulerKind/taskExecutors``.
    var taskExecutor: any TaskExecutor { scheduler as! any TaskExecutor }

    /// Timers the scheduler still holds, where it can tell: the test scheduler's pending entries,
    /// a loop's pending timers. `nil` for Dispatch-backed schedulers.
    var pendingTimers: Int? {
        if let testScheduler { return testScheduler.pendingCount }
        if let loop = scheduler as? LoopScheduler { return loop.statistics.timersPending }
        #if NIO
        if let loop = scheduler as? EventLoopScheduler { return loop.timersPending }
        #endif
        return nil
    }

    /// Runs `body` in a new task and waits for it (see ``eventually(timeout:_:)``).
    ///
    /// - Returns: the task's result, or `nil` when it did not finish in time.
    func runTask<T: Sendable>(
        timeout: Duration = .seconds(20),
        preferringScheduler: Bool = false,
        _ body: @escaping @Sendable () async throws -> T
    ) async -> Result<T, any Error>? {
        await startTask(preferringScheduler: preferringScheduler, body).wait(timeout: timeout)
    }

    /// Starts `body` in a new task and returns a handle to cancel it and read its result. The task
    /// prefers the scheduler when asked (kinds in ``SchedulerKind/taskExecutors``), and always on the
    /// test scheduler (one virtual time); elsewhere it runs on the global pool.
    func startTask<T: Sendable>(
        preferringScheduler: Bool = false,
        _ body: @escaping @Sendable () async throws -> T
    ) -> RunningTask<T> {
        let running = RunningTask<T>(harness: self)
        let executor: (any TaskExecutor)? = preferringScheduler ? taskExecutor : testScheduler
        running.task = Task(executorPreference: executor) {
            let result: Result<T, any Error>
            do { result = .success(try await body()) } catch { result = .failure(error) }
            running.finish(result)
        }
        return running
    }
}

/// A task started by ``Harness/startTask(_:)``.
final class RunningTask<T: Sendable>: Sendable {
    private let harness: Harness
    private let outcome = LockedValue<Result<T, any Error>?>(nil)
    private let handle = LockedValue<Task<Void, Never>?>(nil)

    init(harness: Harness) {
        self.harness = harness
    }

    var task: Task<Void, Never>? {
        get { handle.withLock { $0 } }
        set { handle.withLock { $0 = newValue } }
    }

    func finish(_ result: Result<T, any Error>) {
        outcome.withLock { $0 = result }
    }

    var result: Result<T, any Error>? { outcome.withLock { $0 } }

    func cancel() { task?.cancel() }

    /// Waits for the task to finish (see ``Harness/eventually(timeout:_:)``).
    func wait(timeout: Duration = .seconds(20)) async -> Result<T, any Error>? {
        guard await harness.eventually(timeout: timeout, { self.result != nil }) else { return nil }
        return result
    }
}

extension Result {
    var isCancellationError: Bool {
        if case .failure(let error) = self { return error is CancellationError }
        return false
    }
}
