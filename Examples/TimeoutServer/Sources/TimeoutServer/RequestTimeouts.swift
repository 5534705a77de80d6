import CoreMetrics
import Instrumentation
import Logging
import LoopScheduling
import NIOCore
import Scheduling
import SchedulingNIO
import SchedulingTracing
// `raceWithSleep`, the task-group baseline: the same code `loopsched bench` and `Benchmarks/`
// measure `withTimeout` against. Not API (an SPI of this repository's workload library).
@_spi(Workloads) import SchedulingWorkloads

/// How a request arms its deadline: the command line's `--timeouts`.
///
/// Hummingbird runs the route handlers in tasks on Swift's global executor, not on SwiftNIO's
/// event loops: in every mode the handler arms its deadline from a thread of the global executor.
/// `eventloop` and `nio` arm it on the event loop of the request's connection, from that other
/// thread (the NIOHTTP1 server of this package, `NIOTimeoutServer`, arms its timers on the loop).
enum TimeoutMode: String, CaseIterable, Sendable {
    /// `withTimeout` on the next loop of a `LoopSchedulerGroup`: one timer on the loop, disposed
    /// (freed at once) when the handler answers first; the handler runs in one child task.
    case loop
    /// `withTimeout` on the `EventLoopScheduler` of the connection's event loop: the same code as
    /// `loop`, its timer filed through the scheduler's queue (a cross-thread submission) and
    /// disposed from the handler's thread.
    case eventloop
    /// SwiftNIO's own timer on the connection's event loop: `scheduleTask`, and `Scheduled.cancel()`
    /// when the handler answers first (``withScheduledTaskTimeout(on:_:_:)``), both from the
    /// handler's thread.
    case nio
    /// The hand-written race: a task group with the handler and a `Task.sleep`-then-throw child;
    /// the first to finish wins and the other is cancelled.
    case taskgroup
}

/// Runs each request's handler under a deadline, armed as ``mode`` says, counts the deadlines
/// that passed first in `timeouts_fired_total` (the same counter in every mode), and logs each one
/// from a loop with the request's trace id.
struct RequestTimeouts: Sendable {
    let mode: TimeoutMode
    /// The loops `loop` mode arms its timers on, round robin, and that write the 504 log lines of
    /// `loop` and `taskgroup` modes.
    let loops: LoopSchedulerGroup
    /// Deadlines that passed before their handler answered.
    let fired: Counter
    /// Its metadata provider adds the `trace_id` of the request whose context is current.
    let logger: Logger

    /// Runs `operation` with a deadline `timeout` from now; `eventLoop` is the event loop of the
    /// request's connection (`eventloop` and `nio` modes arm the deadline there).
    ///
    /// - Returns: what `operation` returned, or nil if the deadline passed first (the operation
    ///   was then cancelled and awaited: nothing outlives the call).
    /// - Throws: whatever `operation` throws when it ends before the deadline.
    func run<T: Sendable>(
        within timeout: Duration,
        on eventLoop: any EventLoop,
        _ operation: @escaping @Sendable () async throws -> T
    ) async throws -> T? {
        // The schedulers through SchedulingTracing's wrapper: what they run (the timeout's timer,
        // the log line below) runs in this request's ServiceContext although it runs on a loop.
        do {
            switch mode {
            case .loop:
                return try await loops.next().propagatingServiceContext().withTimeout(timeout, operation)
            case .eventloop:
                return try await eventLoop.scheduler.propagatingServiceContext().withTimeout(timeout, operation)
            case .nio:
                return try await withScheduledTaskTimeout(on: eventLoop, timeout, operation)
            case .taskgroup:
                return try await raceWithSleep(timeout, operation)
            }
        } catch is TimeoutError {
            fired.increment()
            logTimeout(timeout, eventLoop: eventLoop)
            return nil
        }
    }

    /// Logs that `timeout` passed first, from a loop, off the request's task (a task on the loop,
    /// not a timer): from the `LoopSchedulerGroup` in `loop` and `taskgroup` modes, from the
    /// connection's event loop in the others. The request's context is carried there (by
    /// SchedulingTracing's wrapper; by hand in `nio` mode: SwiftNIO carries none), so the line has
    /// the request's trace id.
    private func logTimeout(_ timeout: Duration, eventLoop: any EventLoop) {
        let logger = self.logger
        let line: @Sendable () -> Void = { logger.warning("504: the \(timeout) deadline passed first") }
        switch mode {
        case .loop, .taskgroup:
            loops.next().propagatingServiceContext().schedule(line)
        case .eventloop:
            eventLoop.scheduler.propagatingServiceContext().schedule(line)
        case .nio:
            let context = ServiceContext.current
            eventLoop.execute { ServiceContext.withValue(context, operation: line) }
        }
    }
}
