/// Receives a LoopScheduler's per-iteration figures: the primitive under the metrics integration
/// (`LoopSchedulingMetrics`), like NIO's `NIOEventLoopMetricsDelegate`.
///
/// Called on the loop thread once per loop iteration, before the loop blocks, outside any action
/// (`Schedulers.current` is nil). Keep it quick and non-blocking: the loop waits for it, and
/// timers due meanwhile are late. Without a delegate the loop does no bookkeeping for it at all.
public protocol LoopSchedulerMetricsDelegate: Sendable {
    /// One iteration ended. See ``LoopIterationInfo``.
    func loopIterationDidEnd(_ info: LoopIterationInfo)
}
