#if Metrics
import CoreMetrics
import LoopScheduling
import LoopSchedulingTestSupport
import LoopSchedulingMetrics
import MetricsTestKit
import Scheduling
import Testing

// The README's metrics example, verbatim between the `README:` markers, so CI proves it compiles
// and runs. `factory` stands for the program's metrics backend; here swift-metrics' test kit.
// `print` is shadowed to record what the example prints.

private let printed = LockedValue<[String]>([])
private func print(_ items: Any...) {
    printed.withLock { $0.append(items.map { "\($0)" }.joined(separator: " ")) }
}

@Suite("README examples: metrics")
struct MetricsReadmeExamples {
    @Test("A LoopSchedulerGroup reporting through swift-metrics")
    func metrics() async throws {
        let factory = TestMetrics()
        // README: metrics
        let metrics = LoopMetrics(factory: factory)  // LoopMetrics(): MetricsSystem.factory
        let loops = try LoopSchedulerGroup(count: 2, name: "io", metricsDelegate: metrics)
        loops.next().schedule(after: .milliseconds(5)) { print("fired") }
        // Reported per iteration, e.g. loop_scheduler_timers_fired_total{loop="io-0"} 1
        // README: end
        #expect(await eventually { printed.withLock { $0 } == ["fired"] })
        #expect(await eventually { factory.counterTotal(label: "loop_scheduler_timers_fired_total", dimensions: [("loop", "io-0")]) == 1 })
        await loops.shutdown()
    }
}
#endif
