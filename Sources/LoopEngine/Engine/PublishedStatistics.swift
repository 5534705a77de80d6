import Synchronization

/// The counters as other threads read them.
package final class PublishedStatistics: Sendable {
    private let tasksRun = Atomic<Int>(0)
    private let timersFired = Atomic<Int>(0)
    private let timersPending = Atomic<Int>(0)
    private let disposedBeforeRun = Atomic<Int>(0)
    private let loopIterations = Atomic<Int>(0)
    private let maxLateness = Atomic<Int64>(0)
    private let recentLateness = Atomic<Int64>(0)

    func publish(_ stats: LoopReporter.Counts) {
        tasksRun.store(stats.tasksRun, ordering: .relaxed)
        timersFired.store(stats.timersFired, ordering: .relaxed)
        timersPending.store(stats.timersPending, ordering: .relaxed)
        disposedBeforeRun.store(stats.disposedBeforeRun, ordering: .relaxed)
        loopIterations.store(stats.loopIterations, ordering: .relaxed)
        maxLateness.store(stats.maxLateness, ordering: .relaxed)
        recentLateness.store(stats.recentLateness, ordering: .relaxed)
    }

    /// The counters as last published (each read on its own: see `LoopStatistics`).
    var snapshot: LoopReporter.Counts {
        LoopReporter.Counts(
            tasksRun: tasksRun.load(ordering: .relaxed),
            timersFired: timersFired.load(ordering: .relaxed),
            timersPending: timersPending.load(ordering: .relaxed),
            disposedBeforeRun: disposedBeforeRun.load(ordering: .relaxed),
            loopIterations: loopIterations.load(ordering: .relaxed),
            maxLateness: maxLateness.load(ordering: .relaxed),
            recentLateness: recentLateness.load(ordering: .relaxed)
        )
    }
}
