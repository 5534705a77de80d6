import Scheduling

/// The usual hand-written timeout, and the baseline `withTimeout` is measured against:
/// `operation` and a `Task.sleep(for:)` that throws race in a task group; the first result (or
/// error) wins and `cancelAll()` stops the loser, which the group then awaits. Two child tasks and
/// a sleep per call, against one child and a scheduler timer for `withTimeout`. The cancelled
/// sleep stays queued in the global executor until its deadline.
///
/// - Throws: `TimeoutError` if the sleep ended first; otherwise whatever `operation` throws.
@_spi(Workloads)
public func raceWithSleep<T: Sendable>(
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
