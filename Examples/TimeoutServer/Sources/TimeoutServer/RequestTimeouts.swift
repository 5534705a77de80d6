import CoreMetrics
import Logging
import LoopScheduling
import Scheduling
import SchedulingTracing

/// How a request arms its deadline: the command line's `--timeouts`.
enum TimeoutMode: String, CaseIterable, Sendable {
    /// `withTimeout` on the next loop of a `LoopSchedulerGroup`: one timer on the loop, disposed
    /// (freed at once) when the handler answers first; the handler runs in one child task.
    case loop
    /// The hand-written race: a task group with the handler and a `Task.sleep`-then-throw child;
    /// the first to finish wins and the other is cancelled.
    case taskgroup
}

/// Runs each request's handler under a deadline, armed as ``mode`` says, counts the deadlines
/// that passed first in `timeouts_fired_total` (the same counter in both modes), and logs each one
/// from a loop with the request's trace id.
struct RequestTimeouts: Sendable {
    let mode: TimeoutMode
    /// The loops `loop` mode arms its timers on, and that write the 504 log lines, round robin.
    let loops: LoopSchedulerGroup
    /// Deadlines that passed before their handler answered.
    let fired: Counter
    /// Its metadata provider adds the `trace_id` of the request whose context is current.
    let logger: Logger

    /// Runs `operation` with a deadline `timeout` from now.
    ///
    /// - Returns: what `operation` returned, or nil if the deadline passed first (the operation
    ///   was then cancelled and awaited: nothing outlives the call).
    /// - Throws: whatever `operation` throws when it ends before the deadline.
    func run<T: Sendable>(
        within timeout: Duration,
        _ operation: @escaping @Sendable () async throws -> T
    ) async throws -> T? {
        // The loop through SchedulingTracing's wrapper: what it runs (the timeout's timer, the log
        // line below) runs in this request's ServiceContext although it runs on the loop thread.
        let loop = loops.next().propagatingServiceContext()
        do {
            switch mode {
            case .loop:
                return try await loop.withTimeout(timeout, operation)
            case .taskgroup:
                return try await raceWithSleep(timeout, operation)
            }
        } catch is TimeoutError {
            fired.increment()
            // Written by the loop, off the request's task (a task on the loop, not a timer): the
            // wrapper carried the request's context there, so the line has its trace id.
            let logger = self.logger
            loop.schedule { logger.warning("504: the \(timeout) deadline passed first") }
            return nil
        }
    }
}

/// The usual hand-written timeout: `operation` and a `Task.sleep(for:)` that throws race in a task
/// group; the first result (or error) wins and `cancelAll()` stops the loser, which the group then
/// awaits. Two child tasks and a sleep per call, against one child and a loop timer for
/// `withTimeout`.
///
/// - Throws: ``TimeoutError`` if the sleep ended first; otherwise whatever `operation` throws.
func raceWithSleep<T: Sendable>(
    _ timeout: Duration,
    _ operation: @escaping @Sendable () async throws -> T
) async throws -> T {
    try await withThrowingTaskGroup(of: T.self) { group in
        group.addTask { try await operation() }
        group.addTask {
            try await Task.sleep(for: timeout)
            throw TimeoutError(timeout: timeout)
        }
        defer { group.cancelAll() }
        guard let first = try await group.next() else {
            preconditionFailure("raceWithSleep: a group of two children ended without a result")
        }
        return first
    }
}
