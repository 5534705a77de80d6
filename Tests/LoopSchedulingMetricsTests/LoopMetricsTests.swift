#if Metrics
import CoreMetrics
import Dispatch
import Foundation
import LoopScheduling
import LoopSchedulingTestSupport
import LoopSchedulingMetrics
import MetricsTestKit
import Scheduling
import Synchronization
import Testing

/// LoopMetrics against swift-metrics' own `TestMetrics` factory, handed to the delegate (no
/// global bootstrap).
@Suite("LoopMetrics", .timeLimit(.minutes(10)))  // a hang guard, not a speed check: loaded runs took over 3 min
struct LoopMetricsTests {
    @Test("A loop reports tasks, fires, disposals, iterations, pending timers, lateness and sleep under its name")
    func realLoop() async throws {
        let factory = TestMetrics()
        let metrics = LoopMetrics(factory: factory)
        let loop = try LoopScheduler(name: "metrics-loop", metricsDelegate: metrics)
        let dimensions = [("loop", "metrics-loop")]
        let (tasks, timers, disposed, pending) = (20, 5, 3, 2)
        let fired = Atomic<Int>(0)
        for _ in 0..<tasks { loop.schedule {} }
        for index in 0..<timers {
            loop.schedule(after: .milliseconds(2 * (index + 1))) { fired.add(1, ordering: .relaxed) }
        }
        let far = (0..<(disposed + pending)).map { _ in loop.schedule(after: .seconds(3600)) {} }
        for timer in far.prefix(disposed) { timer.dispose() }
        #expect(await eventually { fired.load(ordering: .relaxed) == timers })

        func total(_ metric: LoopMetrics.Metric) -> Int64 {
            factory.counterTotal(label: metrics.label(metric), dimensions: dimensions)
        }
        // The last fire's iteration reports once it ends: wait for it, then for the gauge.
        #expect(await eventually { total(.timersFired) == Int64(timers) })
        #expect(await eventually { (try? factory.expectGauge(metrics.label(.timersPending), dimensions))?.lastValue == Double(pending) })
        // With nothing left but the far timers the loop blocks until woken: the iteration this task
        // ends was asleep, whatever the load (the timers above may all have found the loop late).
        loop.schedule {}
        #expect(await eventually { total(.tasksRun) == Int64(tasks + 1) })
        await loop.shutdown()

        #expect(total(.tasksRun) == Int64(tasks + 1))
        #expect(total(.disposedBeforeRun) == Int64(disposed))
        #expect(total(.iterations) > 0)
        let lateness = try factory.expectTimer(metrics.label(.timerLateness), dimensions)
        #expect((1...timers).contains(lateness.values.count), "one sample per iteration that fired")
        // Each sample is its iteration's worst fire, measured by the loop: the worst sample is the
        // worst lateness the loop's own statistics recorded.
        #expect(lateness.values.max().map { Duration.nanoseconds($0) } == loop.statistics.maxLateness)
        let sleep = try factory.expectTimer(metrics.label(.sleep), dimensions)
        #expect(sleep.values.contains { $0 > 0 }, "the loop slept while idle")
        // Every metric made carries the loop dimension, and nothing else.
        let all = made(by: factory)
        #expect(all.count == LoopMetrics.Metric.allCases.count)
        #expect(all.allSatisfy { $0.dimensions.elementsEqual(dimensions, by: ==) })
    }

    @Test("A group reports each loop under its own name")
    func group() async throws {
        let factory = TestMetrics()
        let metrics = LoopMetrics(factory: factory)
        let loops = try LoopSchedulerGroup(count: 2, name: "metrics-group", metricsDelegate: metrics)
        for (scheduler, count) in zip(loops.schedulers, [3, 7]) {
            for _ in 0..<count { scheduler.schedule {} }
        }
        let label = metrics.label(.tasksRun)
        #expect(await eventually { factory.counterTotal(label: label, dimensions: [("loop", "metrics-group-0")]) == 3 })
        #expect(await eventually { factory.counterTotal(label: label, dimensions: [("loop", "metrics-group-1")]) == 7 })
        await loops.shutdown()
        #expect(factory.counters(label: label).count == 2)
        let iterationLoops = Set(factory.counters(label: metrics.label(.iterations)).flatMap { $0.dimensions.map(\.1) })
        #expect(iterationLoops == ["metrics-group-0", "metrics-group-1"])
    }

    @Test("Labels are the prefix and the metric's suffix")
    func labels() throws {
        let factory = TestMetrics()
        let metrics = LoopMetrics(prefix: "app_loop_", factory: factory)
        #expect(LoopMetrics.defaultPrefix == "loop_scheduler_")
        #expect(LoopMetrics(factory: factory).label(.tasksRun) == "loop_scheduler_tasks_run_total")
        metrics.loopIterationDidEnd(iteration("a", sleep: .milliseconds(1), tasks: 1, fired: 1, disposed: 1, pending: 1))
        let labels = Set(made(by: factory).map(\.label))
        #expect(labels == Set([
            "app_loop_tasks_run_total", "app_loop_timers_fired_total", "app_loop_disposed_before_run_total",
            "app_loop_iterations_total", "app_loop_timers_pending", "app_loop_timer_lateness", "app_loop_sleep",
        ]))
    }

    @Test("Exactly what each iteration records: zeros skipped, lateness only with fires, the gauge on change")
    func recordingRules() throws {
        let factory = TestMetrics()
        let metrics = LoopMetrics(factory: factory)
        let dimensions = [("loop", "rules")]
        metrics.loopIterationDidEnd(iteration("rules", sleep: .milliseconds(4), tasks: 3, pending: 2))
        metrics.loopIterationDidEnd(iteration("rules", tasks: 0, fired: 2, pending: 2, maxLateness: .microseconds(7)))
        metrics.loopIterationDidEnd(iteration("rules", sleep: .zero, tasks: 5, disposed: 1, pending: 0))
        func values(_ metric: LoopMetrics.Metric) throws -> [Int64] {
            try factory.expectCounter(metrics.label(metric), dimensions).values
        }
        #expect(try values(.iterations) == [1, 1, 1])
        #expect(try values(.tasksRun) == [3, 5])
        #expect(try values(.timersFired) == [2])
        #expect(try values(.disposedBeforeRun) == [1])
        #expect(try factory.expectGauge(metrics.label(.timersPending), dimensions).values == [2, 0])
        #expect(try factory.expectTimer(metrics.label(.timerLateness), dimensions).values == [7_000])
        #expect(try factory.expectTimer(metrics.label(.sleep), dimensions).values == [4_000_000, 0])
    }

    @Test("Metric objects are made once per loop name, also when loops race to their first iteration")
    func madeOncePerName() async {
        let factory = CountingFactory()
        let metrics = LoopMetrics(factory: factory)
        let names = (0..<6).map { "race-\($0)" }
        let perThread = 2_000
        // Two threads per name, all starting at once: the registry's slow path races itself.
        await withTaskGroup(of: Void.self) { threads in
            for name in names + names {
                threads.addTask {
                    await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                        Thread.detachNewThread {
                            for _ in 0..<perThread { metrics.loopIterationDidEnd(iteration(name, tasks: 1)) }
                            done.resume()
                        }
                    }
                }
            }
        }
        #expect(factory.made.load(ordering: .relaxed) == names.count * LoopMetrics.Metric.allCases.count)
        for name in names {
            let total = factory.metrics.counterTotal(label: metrics.label(.tasksRun), dimensions: [("loop", name)])
            #expect(total == Int64(2 * perThread))
        }
    }
}
#endif
