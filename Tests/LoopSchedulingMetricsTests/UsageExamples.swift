#if Metrics
import CoreMetrics
import LoopScheduling
import LoopSchedulingTestSupport
import LoopSchedulingMetrics
import MetricsTestKit
import Scheduling
import Testing

// Usage examples (the earlier README's), kept as tests of what they promise. The examples of
// the README and the DocC articles themselves are compiled and run from an outside consumer
// package by `make examples`.

private let printed = LockedValue<[String]>([])
private func print(_ items: Any...) {
    printed.withLock { $0.append(items.map { "\($0)" }.joined(separator: " ")) }
}

@Suite("Usage examples: metrics")
struct MetricsUsageExamples {
    @Test("A LoopSchedulerGroup reporting through swift-metrics")
    func metrics() async throws {
        let factory = TestMetrics()
        let metrics = LoopMetrics(factory: factory)  // LoopMetrics(): MetricsSystem.factory
        let loops = try LoopSchedulerGroup(count: 2, name: "io", metricsDelegate: metrics)
        loops.next().schedule(after: .milliseconds(5)) { print("fired") }
        // Reported per iteration, e.g. loop_scheduler_timers_fired_total{loop="io-0"} 1
        #expect(await eventually { printed.withLock { $0 } == ["fired"] })
        #expect(await eventually { factory.counterTotal(label: "loop_scheduler_timers_fired_total", dimensions: [("loop", "io-0")]) == 1 })
        await loops.shutdown()
    }
}
#endif
