#if Metrics
import CoreMetrics
import Dispatch
import LoopScheduling
import LoopSchedulingTestSupport
import MetricsTestKit
import Scheduling
import Synchronization

/// swift-metrics' own test factory, counting how many metric objects it was asked to make (its
/// handlers are cached by label and dimensions, so making one twice would not show otherwise).
final class CountingFactory: MetricsFactory {
    let metrics = TestMetrics()
    let made = Atomic<Int>(0)

    func makeCounter(label: String, dimensions: [(String, String)]) -> any CounterHandler {
        made.add(1, ordering: .relaxed)
        return metrics.makeCounter(label: label, dimensions: dimensions)
    }

    func makeRecorder(label: String, dimensions: [(String, String)], aggregate: Bool) -> any RecorderHandler {
        made.add(1, ordering: .relaxed)
        return metrics.makeRecorder(label: label, dimensions: dimensions, aggregate: aggregate)
    }

    func makeTimer(label: String, dimensions: [(String, String)]) -> any TimerHandler {
        made.add(1, ordering: .relaxed)
        return metrics.makeTimer(label: label, dimensions: dimensions)
    }

    func destroyCounter(_ handler: any CounterHandler) { metrics.destroyCounter(handler) }
    func destroyRecorder(_ handler: any RecorderHandler) { metrics.destroyRecorder(handler) }
    func destroyTimer(_ handler: any TimerHandler) { metrics.destroyTimer(handler) }
}

/// An iteration's figures, zero unless given.
func iteration(
    _ loopName: String,
    sleep: Duration? = nil,
    tasks: Int = 0,
    fired: Int = 0,
    disposed: Int = 0,
    pending: Int = 0,
    maxLateness: Duration = .zero
) -> LoopIterationInfo {
    LoopIterationInfo(
        loopName: loopName,
        end: .zero,
        duration: .zero,
        sleepTime: sleep,
        tasksRun: tasks,
        timersFired: fired,
        disposedBeforeRun: disposed,
        timersPending: pending,
        maxLateness: maxLateness,
        totalLateness: maxLateness * fired
    )
}

/// The label and dimensions of every metric `factory` made.
func made(by factory: TestMetrics) -> [(label: String, dimensions: [(String, String)])] {
    factory.counters.map { ($0.label, $0.dimensions) }
        + factory.recorders.map { ($0.label, $0.dimensions) }
        + factory.timers.map { ($0.label, $0.dimensions) }
}
#endif
