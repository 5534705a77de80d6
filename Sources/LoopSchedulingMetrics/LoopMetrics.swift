#if Metrics
import CoreMetrics
import LoopScheduling
import Scheduling

/// Reports what LoopSchedulers do through swift-metrics: a `LoopSchedulerMetricsDelegate` to hand
/// to `LoopScheduler(name:metricsDelegate:)` or `LoopSchedulerGroup(count:name:metricsDelegate:)`.
///
/// ```swift
/// let metrics = LoopMetrics()  // MetricsSystem.factory, as bootstrapped by the program
/// let loops = try LoopSchedulerGroup(count: 4, name: "io", metricsDelegate: metrics)
/// ```
///
/// Every metric carries the dimension `("loop", name)`, the scheduler's name (`"io-0"`, `"io-1"`,
/// … in a group). The labels are the prefix (``defaultPrefix`` unless given) followed by:
///
/// | Label (default prefix)                     | Type    | What                                                          |
/// |--------------------------------------------|---------|---------------------------------------------------------------|
/// | `loop_scheduler_tasks_run_total`           | Counter | Tasks and jobs run                                             |
/// | `loop_scheduler_timers_fired_total`        | Counter | Timer fires: one-shot timers and periodic ticks               |
/// | `loop_scheduler_disposed_before_run_total` | Counter | Actions dropped because they were disposed before they ran    |
/// | `loop_scheduler_iterations_total`          | Counter | Loop iterations                                               |
/// | `loop_scheduler_timers_pending`            | Gauge   | Timers waiting in the loop at the end of the last iteration  |
/// | `loop_scheduler_timer_lateness`            | Timer   | Per iteration with fires, the latest fire's lateness          |
/// | `loop_scheduler_sleep`                     | Timer   | Per iteration that slept, how long it slept in the poll      |
///
/// Choices, and why:
/// - **Lateness is one sample per iteration, its worst fire** (`LoopIterationInfo.maxLateness`,
///   recorded only when the iteration fired timers). The loop measures lateness against one clock
///   read per iteration, so fires of one iteration share it; the worst is the figure an alert
///   wants, and a burst of N fires costs one sample, not N. The distribution is thus of the worst
///   lateness per busy iteration, not of every fire; mean lateness per fire is not reported.
/// - **Sleep is a Timer**, one sample per iteration that slept (millisecond resolution, from
///   libuv's loop time; iterations that did not poll-wait record nothing). A Timer's sum over an
///   interval is the time the loop idled in it — `1 - rate(sum)` is the loop's busy fraction —
///   and its distribution shows how long the loop waits for work, which a Gauge of the last
///   sleep cannot.
/// - Timers record nanoseconds; the backend chooses the unit it exports (so the labels carry
///   none). Counters that would grow by zero are not touched, and the Gauge is set only when
///   the pending count changed, so an idle loop costs one counter increment and one sleep sample
///   per iteration.
///
/// The metric objects are made once per loop name, on the first iteration of that loop, and
/// reused: an iteration allocates nothing. Loops that share a name share their metrics (their
/// counters add up; the Gauge shows whichever reported last). Metrics are not destroyed when a
/// loop shuts down: the counters keep their totals for the program's life, as swift-metrics
/// backends expect.
///
/// Called on each loop's thread, concurrently for the loops of a group: thread-safe.
///
/// ## Implementation
///
/// An iteration looks nothing up in a dictionary: it scans the names seen so far, newest first,
/// without a lock, and the loop's own name matches by string identity.
public final class LoopMetrics: LoopSchedulerMetricsDelegate {
    /// The label prefix used unless the initializer is given another: `loop_scheduler_`.
    public static let defaultPrefix = "loop_scheduler_"

    /// The metrics reported, each named by its label suffix (the label is prefix + `rawValue`).
    public enum Metric: String, CaseIterable, Sendable {
        /// Counter of tasks and jobs run.
        case tasksRun = "tasks_run_total"
        /// Counter of timer fires (one-shot and periodic ticks).
        case timersFired = "timers_fired_total"
        /// Counter of actions dropped because they were disposed before they ran.
        case disposedBeforeRun = "disposed_before_run_total"
        /// Counter of loop iterations.
        case iterations = "iterations_total"
        /// Gauge of the timers waiting in the loop.
        case timersPending = "timers_pending"
        /// Timer of each firing iteration's worst lateness.
        case timerLateness = "timer_lateness"
        /// Timer of each iteration's sleep in the poll.
        case sleep = "sleep"
    }

    /// The label prefix, such as ``defaultPrefix``.
    public let prefix: String
    private let registry: LoopMetricsRegistry

    /// Reports through `factory`, with labels starting with `prefix`.
    ///
    /// - Parameters:
    ///   - prefix: Prepended to every label (see the table in the type's documentation); may be
    ///     empty.
    ///   - factory: Makes the metric objects. The default is read once, here: bootstrap the
    ///     metrics system before making the delegate (or pass a factory, as tests do, which then
    ///     need no global bootstrap).
    public init(prefix: String = LoopMetrics.defaultPrefix, factory: any MetricsFactory = MetricsSystem.factory) {
        self.prefix = prefix
        registry = LoopMetricsRegistry(prefix: prefix, factory: factory)
    }

    /// The label of `metric`: ``prefix`` followed by the metric's suffix.
    public func label(_ metric: Metric) -> String {
        prefix + metric.rawValue
    }

    /// Records one iteration's figures under the dimension `("loop", info.loopName)`. Called by
    /// the loop on its thread; makes the loop's metric objects on its first call for a name.
    public func loopIterationDidEnd(_ info: LoopIterationInfo) {
        registry.withHandles(for: info.loopName) { $0.record(info) }
    }
}
#endif
