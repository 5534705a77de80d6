import Scheduling

/// The loop's counters: kept as plain integers on the loop thread, published to other threads
/// (``PublishedStatistics``) at the end of every batch and iteration, and handed to the metrics
/// delegate once per iteration.
final class LoopReporter: LoopPart {
    // Loop-confined (see LoopPart).
    @exclusivity(unchecked) private var _state = State()

    private var state: State {
        _read {
            assertConfined()
            yield _state
        }
        _modify {
            assertConfined()
            yield &_state
        }
    }

    /// The loop's own counters: plain integers, loop-confined.
    struct Counts {
        var tasksRun = 0
        var timersFired = 0
        var timersPending = 0
        var disposedBeforeRun = 0
        var loopIterations = 0
        var maxLateness: Int64 = 0
        var recentLateness: Int64 = 0
    }

    /// The running counts of one iteration for the delegate, reset each iteration.
    struct Iteration {
        var previousEnd: Int64?
        /// libuv's loop time (milliseconds) when the first callback after the poll ran.
        var wakeMillis: UInt64?
        /// The counts when the iteration began: the iteration's own are the difference.
        var atStart = Counts()
        var maxLateness: Int64 = 0
        var totalLateness: Int64 = 0
    }

    struct State {
        var counts = Counts()
        var iteration = Iteration()
    }

    let published = PublishedStatistics()
    /// Told about every loop iteration; nil costs nothing.
    let delegate: (any LoopSchedulerMetricsDelegate)?

    init(delegate: (any LoopSchedulerMetricsDelegate)?, loopThread: LoopThreadIdentity) {
        self.delegate = delegate
        super.init(loopThread: loopThread)
    }

    @inline(__always) func taskRan() { state.counts.tasksRun += 1 }

    @inline(__always) func disposedBeforeRun() { state.counts.disposedBeforeRun += 1 }

    @inline(__always)
    func timerFired(lateness: Int64) {
        state.counts.timersFired += 1
        state.counts.recentLateness = lateness
        if lateness > state.counts.maxLateness { state.counts.maxLateness = lateness }
        if delegate != nil {
            state.iteration.maxLateness = max(state.iteration.maxLateness, lateness)
            state.iteration.totalLateness = Nanoseconds.adding(state.iteration.totalLateness, lateness)
        }
    }

    func iterationBegan() { state.counts.loopIterations += 1 }

    /// The first callback after the poll: when the loop woke, for the delegate's sleep time.
    @inline(__always)
    func loopWoke(atLoopMillis millis: @autoclosure () -> UInt64) {
        if delegate != nil && state.iteration.wakeMillis == nil { state.iteration.wakeMillis = millis() }
    }

    func publish(timersPending: Int) {
        state.counts.timersPending = timersPending
        published.publish(state.counts)
    }

    /// Loop iterations so far: for tests.
    var loopIterations: Int { state.counts.loopIterations }

    /// At the end of an iteration (`now` is the prepare callback's clock read): hands the figures
    /// to the delegate, outside any access to the counters, and starts counting anew.
    func iterationEnded(now: Int64, loopName: String, timersPending: Int) {
        guard let delegate else { return }
        let counts = state.counts
        let iteration = state.iteration
        var sleep: Duration?
        if let wake = iteration.wakeMillis, let previous = iteration.previousEnd {
            let wakeNanoseconds = Int64(clamping: wake) &* 1_000_000
            sleep = .nanoseconds(max(0, wakeNanoseconds - previous))
        }
        let info = LoopIterationInfo(
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
        state.iteration = Iteration(previousEnd: now, atStart: counts)
        delegate.loopIterationDidEnd(info)
    }
}
