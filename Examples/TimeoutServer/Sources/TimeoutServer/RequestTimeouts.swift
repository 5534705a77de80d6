import CoreMetrics
import Logging
import LoopScheduling
import Scheduling
import SchedulingTracing
// `raceWithSleep`, the task-group baseline: the same code `loopsched bench` and `Benchmarks/`
// measure `withTimeout` against. Not API (an SPI of this repository's workload library).
@_spi(Workloads) import SchedulingWorkloads

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
