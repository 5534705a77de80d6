/// Thrown to a task waiting on a scheduler that shut down: by ``DateScheduler/sleep(for:leeway:)``,
/// ``DateScheduler/sleep(until:leeway:)``, ``SchedulerClock/sleep(until:tolerance:)`` and
/// ``DateScheduler/withTimeout(_:_:)``, when the scheduler shuts down while the task waits, or at
/// once when the call comes after the shutdown.
///
/// Only a scheduler that can be shut down throws it (a `LoopScheduler`, the loops of a
/// `LoopSchedulerGroup`): shutdown disposes every pending timer, so a wait on one could otherwise
/// never end. It is not a `CancellationError`: the task was not cancelled, and a caller can tell
/// the two apart (`catch is SchedulerShutdownError`). The tick sequence of
/// ``DateScheduler/ticks(every:leeway:)`` cannot throw: it ends instead, and `Task.isCancelled`
/// tells the two apart there. Code generic over `Clock` treats this error as it treats any error
/// a clock's `sleep` throws: for instance, swift-async-algorithms' `debounce` and
/// `AsyncTimerSequence` end their sequence.
///
/// See "Shutdown seen by async callers" in the Concurrency article.
public struct SchedulerShutdownError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Makes the error.
    public init() {}

    /// `SchedulerShutdownError()`: the scheduler shut down before the wait ended.
    public var description: String { "SchedulerShutdownError(): the scheduler shut down before the wait ended" }
}
