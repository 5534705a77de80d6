@_spi(SchedulerEngine) import Scheduling

/// Told about every loop iteration, on the loop thread, outside any action: a scheduler's metrics
/// delegate (`LoopSchedulerMetricsDelegate`), seen through the engine's own figures.
package protocol LoopIterationObserver: Sendable {
    func loopIterationDidEnd(_ figures: LoopIterationFigures)
}

/// What one iteration did (the public `LoopIterationInfo`, field for field; see there).
package struct LoopIterationFigures: Sendable {
    package var loopName: String
    package var end: Duration
    package var duration: Duration
    package var sleepTime: Duration?
    package var tasksRun: Int
    package var timersFired: Int
    package var disposedBeforeRun: Int
    package var timersPending: Int
    package var maxLateness: Duration
    package var totalLateness: Duration
}

/// The loop's counters: kept as plain integers on the loop thread, published to other threads
/// (``PublishedStatistics``) at the end of every batch and iteration, and handed to the metrics
/// delegate once per iteration.
package final class LoopReporter {
    // Loop-confined, never across user code (see LoopConfined).
    @exclusivity(unchecked) private var state: LoopConfined<State>

    /// The loop's own counters: plain integers, loop-confined (and a published snapshot of them).
    package struct Counts: Sendable {
        package var tasksRun = 0
        package var timersFired = 0
        package var timersPending = 0
        package var disposedBeforeRun = 0
        package var loopIterations = 0
        package var maxLateness: Int64 = 0
        package var recentLateness: Int64 = 0
    }

    /// The running counts of one iteration for the delegate, reset each iteration.
    package struct Iteration {
        var previousEnd: Int64?
        /// libuv's loop time (milliseconds) when the first callback after the poll ran.
        var wakeMillis: UInt64?
        /// The counts when the iteration began: the iteration's own are the difference.
        var atStart = Counts()
        var maxLateness: Int64 = 0
        var totalLateness: Int64 = 0
    }

    package struct State {
        var counts = Counts()
        var iteration = Iteration()
    }

    package let published = PublishedStatistics()
    /// Told about every loop iteration; nil costs nothing.
    let delegate: (any LoopIterationObserver)?

    init(delegate: (any LoopIterationObserver)?, loopThread: LoopThreadIdentity) {
        self.delegate = delegate
        state = LoopConfined(State(), loopThread: loopThread)
    }

    @inline(__always) func taskRan() { state.value.counts.tasksRun += 1 }

    @inline(__always) func disposedBeforeRun() { state.value.counts.disposedBeforeRun += 1 }

    @inline(__always)
    func timerFired(lateness: Int64) {
        state.value.counts.timersFired += 1
        state.value.counts.recentLateness = lateness
        if lateness > state.value.counts.maxLateness { state.value.counts.maxLateness = lateness }
        if delegate != nil {
            state.value.iteration.maxLateness = max(state.value.iteration.maxLateness, lateness)
            state.value.iteration.totalLateness = Nanoseconds.adding(state.value.iteration.totalLateness, lateness)
        }
    }

    func iterationBegan() { state.value.counts.loopIterations += 1 }

    /// The first callback after the poll: when the loop woke, for the delegate's sleep time (a loop
    /// without a cached clock of its own reports none).
    @inline(__always)
    func loopWoke(atLoopMillis millis: @autoclosure () -> UInt64?) {
        if delegate != nil && state.value.iteration.wakeMillis == nil { state.value.iteration.wakeMillis = millis() }
    }

    func publish(timersPending: Int) {
        state.value.counts.timersPending = timersPending
        published.publish(state.value.counts)
    }

    /// Loop iterations so far: for tests.
    var loopIterations: Int { state.value.counts.loopIterations }

    /// At the end of an iteration (`now` is the prepare callback's clock read): hands the figures
    /// to the delegate, outside any access to the counters, and starts counting anew.
    func iterationEnded(now: Int64, loopName: String, timersPending: Int) {
        guard let delegate else { return }
        let counts = state.value.counts
        let iteration = state.value.iteration
        var sleep: Duration?
        if let wake = iteration.wakeMillis, let previous = iteration.previousEnd {
            let wakeNanoseconds = Int64(clamping: wake) &* 1_000_000
            sleep = .nanoseconds(max(0, wakeNanoseconds - previous))
        }
        let info = LoopIterationFigures(
            loopName: loopName,
            end: .nanoseconds(now),
            duration: .nanoseconds(iteration.previousEnd.map { max(0, now - $0) } ?? 0),
            sleepTime: sleep,
            tasksRun: counts.tasksRun - iteration.atStart.tasksRun,
            timersFired: counts.timersFired - iteration.atStart.timersFired,
            disposedBeforeRun: counts.disposedBeforeRun - iteration.atStart.disposedBeforeRun,
            timersPending: timersPending,
            maxLateness: .nanoseconds(iteration.maxLateness),
            totalLateness: .nanoseconds(iteration.totalLateness)
        )
        state.value.iteration = Iteration(previousEnd: now, atStart: counts)
        delegate.loopIterationDidEnd(info)
    }
}
