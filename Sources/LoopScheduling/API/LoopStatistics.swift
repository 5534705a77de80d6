import Synchronization

/// A snapshot of a LoopScheduler's counters, cheap enough to read often.
///
/// The loop publishes its counters at the end of every batch and every loop iteration, so a
/// snapshot may lag the loop by one batch, and its fields may come from two neighbouring batches.
///
/// ## Implementation
///
/// Each counter is published with a plain relaxed store, and read the same way: no lock on
/// either side.
public struct LoopStatistics: Sendable, Equatable {
    /// Tasks (``LoopScheduler/schedule(_:)``) that ran.
    public var tasksRun: Int
    /// Timer fires: one-shot timers plus periodic ticks.
    public var timersFired: Int
    /// Timers (one-shot and periodic) waiting in the loop, as of the loop's last look at
    /// its queue. A timer scheduled or disposed on another thread is counted or uncounted when the
    /// loop next looks: at once when it needs the loop awake (it is due before the loop's armed
    /// wake-up), otherwise within 10 ms; always after a round trip through the loop (a task
    /// scheduled from that thread has run). With the `ExperimentalExecutors` trait, the wake-ups of
    /// plain `Task.sleep`s in tasks that prefer the loop count here too, a cancelled sleep's until
    /// its deadline (the loop is never told of the cancellation).
    public var timersPending: Int
    /// Actions dropped because they were disposed before they ran (shutdown's disposals included).
    public var disposedBeforeRun: Int
    /// Iterations of the libuv loop.
    public var loopIterations: Int
    /// The largest lateness of a timer fire since the loop started (how long after its deadline
    /// the loop picked it up).
    public var maxLateness: Duration
    /// The lateness of the most recent timer fire.
    public var recentLateness: Duration
}
