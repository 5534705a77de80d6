import NIOConcurrencyHelpers
import NIOCore
import Scheduling

/// `withTimeout` with SwiftNIO's timer, for `--timeouts nio`: `operation` runs in one child task
/// (started on the caller's thread, as `withTimeout` starts it) while a `scheduleTask` on
/// `eventLoop` waits to cancel it; if the operation ends first the task is cancelled
/// (`Scheduled.cancel()`: a linear search of the loop's scheduled tasks, under the loop's lock).
/// Called from a Hummingbird handler, so both the schedule and the cancel come from another thread
/// than the loop's.
///
/// - Returns: what `operation` returned, if it ended before the deadline.
/// - Throws: `TimeoutError` if the deadline passed first (the child was then cancelled and awaited:
///   nothing outlives the call); otherwise whatever `operation` throws.
func withScheduledTaskTimeout<T: Sendable>(
    on eventLoop: any EventLoop,
    _ timeout: Duration,
    _ operation: @escaping @Sendable () async throws -> T
) async throws -> T {
    let race = ScheduledTaskRace()
    let deadline = eventLoop.scheduleTask(in: TimeAmount(timeout)) { race.deadlinePassed() }
    let child: @Sendable () async -> Result<T, any Error> = {
        do {
            return .success(try await race.run(operation))
        } catch {
            return .failure(error)
        }
    }
    let outcome = await withTaskGroup(of: Result<T, any Error>.self) { group in
        group.addImmediateTask(operation: child)
        return await group.next()!
    }
    guard race.operationWon() else { throw TimeoutError(timeout: timeout) }
    deadline.cancel()
    return try outcome.get()
}

/// The race between the operation's child task and the scheduled task: the child registers itself
/// when it starts, the scheduled task cancels it under the same lock, and whoever claims the race
/// first wins.
// `@unchecked`: `state` (its `child` is not Sendable) is only read and written under `lock`, and
// the child is only cancelled between its registration and its deregistration, while it is alive.
private final class ScheduledTaskRace: @unchecked Sendable {
    private struct State {
        var child: UnsafeCurrentTask?
        var deadlinePassed = false
        var operationEnded = false
    }

    private let lock = NIOLock()
    private var state = State()

    func run<T: Sendable>(_ operation: @Sendable () async throws -> T) async throws -> T {
        withUnsafeCurrentTask { task in
            let late = lock.withLock {
                if !state.deadlinePassed { state.child = task }
                return state.deadlinePassed
            }
            if late { task?.cancel() }
        }
        defer {
            lock.withLock {
                state.child = nil
                state.operationEnded = true
            }
        }
        return try await operation()
    }

    /// The scheduled task: cancels the child unless the operation already ended.
    func deadlinePassed() {
        lock.withLock {
            guard !state.operationEnded else { return }
            state.deadlinePassed = true
            state.child?.cancel()
        }
    }

    /// After the child ended: true if the operation won (the deadline then loses).
    func operationWon() -> Bool {
        lock.withLock {
            state.operationEnded = true
            return !state.deadlinePassed
        }
    }
}
