/// What one iteration of a LoopScheduler's loop did, handed to its
/// ``LoopSchedulerMetricsDelegate`` (NIO's `NIOEventLoopTickInfo`).
///
/// An iteration runs from one moment the loop is about to block (libuv's prepare phase) to the
/// next: it sleeps in the poll, wakes, and runs whatever work came in.
public struct LoopIterationInfo: Sendable, Equatable {
    /// The scheduler's name (the `loop` dimension of the metrics).
    public var loopName: String
    /// When the iteration ended, on the monotonic clock (`CLOCK_MONOTONIC` since boot): the one
    /// clock read the loop makes per iteration, which it needs for its timers anyway.
    public var end: Duration
    /// How long the iteration took, from the previous ``end`` to this one (zero for the first).
    public var duration: Duration
    /// How much of ``duration`` the loop slept in its poll, waiting for work. Millisecond
    /// resolution: it comes from libuv's cached loop time, which libuv refreshes when the poll
    /// returns, so measuring it costs no clock read of ours. Nil when the loop did not sleep.
    public var sleepTime: Duration?
    /// Tasks and jobs run in the iteration.
    public var tasksRun: Int
    /// Timer fires (one-shot and periodic ticks) in the iteration.
    public var timersFired: Int
    /// Actions dropped in the iteration because they were disposed before they ran.
    public var disposedBeforeRun: Int
    /// Timers waiting in the loop when the iteration ended.
    public var timersPending: Int
    /// The largest lateness of a timer fire in the iteration (zero without fires).
    public var maxLateness: Duration
    /// The summed lateness of the iteration's fires, for a mean with ``timersFired``.
    public var totalLateness: Duration

    /// Makes an info value; for tests of delegates.
    public init(
        loopName: String,
        end: Duration,
        duration: Duration,
        sleepTime: Duration?,
        tasksRun: Int,
        timersFired: Int,
        disposedBeforeRun: Int,
        timersPending: Int,
        maxLateness: Duration,
        totalLateness: Duration
    ) {
        self.loopName = loopName
        self.end = end
        self.duration = duration
        self.sleepTime = sleepTime
        self.tasksRun = tasksRun
        self.timersFired = timersFired
        self.disposedBeforeRun = disposedBeforeRun
        self.timersPending = timersPending
        self.maxLateness = maxLateness
        self.totalLateness = totalLateness
    }
}
