import Synchronization

/// A snapshot of a LoopScheduler's counters, cheap enough to read often.
///
/// The loop publishes its counters with plain relaxed stores at the end of every batch and every
/// loop iteration, so a snapshot may lag the loop by one batch, and its fields may come from two
/// neighbouring batches.
public struct LoopStatistics: Sendable, Equatable {
    /// Tasks (``LoopScheduler/schedule(_:)``) that ran.
    public var tasksRun: Int
    /// Timer fires: one-shot timers plus periodic ticks.
    public var timersFired: Int
    /// Timers (one-shot and periodic) waiting in the loop's heaps, as of the loop's last look at
    /// its queue. A timer scheduled or disposed on another thread is counted or uncounted when the
    /// loop next looks: at once when it needs the loop awake (it is due before the loop's armed
    /// wake-up), otherwise within 10 ms; always after a round trip through the loop (a task
    /// scheduled from that thread has run).
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

/// The loop's own counters: plain integers, loop-confined.
struct LocalStatistics {
    var tasksRun = 0
    var timersFired = 0
    var timersPending = 0
    var disposedBeforeRun = 0
    var loopIterations = 0
    var maxLateness: Int64 = 0
    var recentLateness: Int64 = 0

    mutating func recordFire(lateness: Int64) {
        timersFired += 1
        recentLateness = lateness
        if lateness > maxLateness { maxLateness = lateness }
    }
}

/// The counters as other threads read them.
final class PublishedStatistics: Sendable {
    private let tasksRun = Atomic<Int>(0)
    private let timersFired = Atomic<Int>(0)
    private let timersPending = Atomic<Int>(0)
    private let disposedBeforeRun = Atomic<Int>(0)
    private let loopIterations = Atomic<Int>(0)
    private let maxLateness = Atomic<Int64>(0)
    private let recentLateness = Atomic<Int64>(0)

    func publish(_ stats: LocalStatistics) {
        tasksRun.store(stats.tasksRun, ordering: .relaxed)
        timersFired.store(stats.timersFired, ordering: .relaxed)
        timersPending.store(stats.timersPending, ordering: .relaxed)
        disposedBeforeRun.store(stats.disposedBeforeRun, ordering: .relaxed)
        loopIterations.store(stats.loopIterations, ordering: .relaxed)
        maxLateness.store(stats.maxLateness, ordering: .relaxed)
        recentLateness.store(stats.recentLateness, ordering: .relaxed)
    }

    var snapshot: LoopStatistics {
        LoopStatistics(
            tasksRun: tasksRun.load(ordering: .relaxed),
            timersFired: timersFired.load(ordering: .relaxed),
            timersPending: timersPending.load(ordering: .relaxed),
            disposedBeforeRun: disposedBeforeRun.load(ordering: .relaxed),
            loopIterations: loopIterations.load(ordering: .relaxed),
            maxLateness: .nanoseconds(maxLateness.load(ordering: .relaxed)),
            recentLateness: .nanoseconds(recentLateness.load(ordering: .relaxed))
        )
    }
}
