import CoreMetrics
import LoopScheduling
import Scheduling

/// How a request arms its deadline: the command line's `--timeouts`.
enum TimeoutMode: String, CaseIterable, Sendable {
    /// `withTimeout` on the next loop of a `LoopSchedulerGroup`: one timer on the loop, disposed
    /// (freed at once) when the handler answers first; the handler runs in one child task.
    case loop
    /// The hand-written race: a task group with the handler and a `Task.sleep`-then-throw child;
    /// the first to finish wins and the other is cancelled.
    case taskgroup
}

/// Runs each request's handler under a deadline, armed as ``mode`` says, and counts the deadlines
/// that passed first in `timeouts_fired_total` (the same counter in both modes).
struct RequestTimeouts: Sendable {
    let mode: TimeoutMode
    /// The loops `loop` mode arms its timers on, round robin.
    let loops: LoopSchedulerGroup
    /// Deadlines that passed before their handler answered.
    let fired: Counter

    /// Runs `operation` with a deadline `timeout` from now.
    ///
    /// - Returns: what `operation` returned, or nil if the deadline passed first (the operation
    ///   was then cancelled and awaited: nothing outlives the call).
    /// - Throws: whatever `operation` throws when it ends before the deadline.
    func run<T: Sendable>(
        within timeout: Duration,
        _ operation: @escaping @Sendable () async throws -> T
    ) async throws -> T? {
        do {
            switch mode {
            case .loop:
                return try await loops.next().withTimeout(timeout, operation)
            case .taskgroup:
                return try await raceWithSleep(timeout, operation)
            }
        } catch is TimeoutError {
            fired.increment()
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
