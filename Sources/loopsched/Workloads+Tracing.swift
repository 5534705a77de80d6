#if CommandLineTool
import Dispatch
import Instrumentation
import LoopScheduling
import Scheduling
import SchedulingTracing
@_spi(Workloads) import SchedulingWorkloads

/// `schedule-traced`: what carrying `ServiceContext` from `schedule` into the action costs
/// (SchedulingTracing), on a LoopScheduler beside the same loop used plainly: n tasks submitted
/// from another thread, then n from the loop thread, until all ran. The wrapper reads the
/// task-local once per call; with a context set it also captures it in a closure and restores it
/// around the run.
enum TracingWorkload: String, CaseIterable, Codable {
    case scheduleTraced = "schedule-traced"

    var defaultSize: Int { 1_000_000 }

    var summary: String {
        "n tasks from another thread, then n from the loop thread, on a LoopScheduler: plain, "
            + "through SchedulingTracing's wrapper with no context set, and with one set"
    }

    /// The report's columns, in order.
    static let metrics = ["cross ns/task", "cross submit ns/call", "on-loop ns/task", "on-loop submit ns/call"]
}

/// How `schedule-traced` schedules.
enum TracingSystem: String, CaseIterable, Codable {
    case plain
    case wrapperNoContext
    case wrapperWithContext

    var displayName: String {
        switch self {
        case .plain: "LoopScheduler"
        case .wrapperNoContext: "wrapper, no context"
        case .wrapperWithContext: "wrapper, context set"
        }
    }

    /// Runs `body` as the submitting code: inside a request's context for `wrapperWithContext`.
    func submitting(_ body: () -> Void) {
        guard self == .wrapperWithContext else { return body() }
        var context = ServiceContext.topLevel
        context[BenchTraceIDKey.self] = "4bf92f3577b34da6a3ce929d0e0e4736"
        ServiceContext.withValue(context, operation: body)
    }
}

/// A trace id, as a tracer would keep one in the context.
private enum BenchTraceIDKey: ServiceContextKey {
    typealias Value = String
}

extension TracingWorkload {
    func run(on system: TracingSystem, size n: Int, driver: TimerDriverKind) throws -> Sample {
        let loop = try LoopScheduler(name: "bench-traced", clock: SystemClock(), driver: driver)
        defer { loop.syncShutdown() }
        let scheduler: any DateScheduler = system == .plain ? loop : loop.propagatingServiceContext()
        var sample = Sample()

        // From another thread (this one): the remote queue.
        var countdown = Countdown(n)
        var start = Measure.now()
        system.submitting {
            for _ in 0..<n { scheduler.schedule { [countdown] in countdown.tick() } }
        }
        var submitted = Measure.now()
        guard countdown.wait(timeout: .seconds(120)) else {
            sample.failures.append("\(countdown.left) of \(n) cross-thread tasks never ran")
            return sample
        }
        sample.metrics["cross ns/task"] = Double(countdown.finishedAt.load(ordering: .acquiring) - start) / Double(n)
        sample.metrics["cross submit ns/call"] = Double(submitted - start) / Double(n)

        // From the loop thread: the loop-local queue, where the call itself is most of the cost.
        countdown = Countdown(n)
        let onLoop = countdown
        let times = LockedValue<(Int64, Int64)>((0, 0))
        SchedulerSystem(scheduler: loop, shutdown: {}).onScheduler {
            let start = Measure.now()
            system.submitting {
                for _ in 0..<n { scheduler.schedule { onLoop.tick() } }
            }
            times.withLock { $0 = (start, Measure.now()) }
        }
        guard countdown.wait(timeout: .seconds(120)) else {
            sample.failures.append("\(countdown.left) of \(n) on-loop tasks never ran")
            return sample
        }
        (start, submitted) = times.withLock { $0 }
        sample.metrics["on-loop ns/task"] = Double(countdown.finishedAt.load(ordering: .acquiring) - start) / Double(n)
        sample.metrics["on-loop submit ns/call"] = Double(submitted - start) / Double(n)
        return sample
    }
}

/// Runs `schedule-traced` on each system, `repetitions` times, alternating which goes first.
struct TracingBench {
    let workloads: [TracingWorkload]
    let repetitions: Int
    let size: Int?
    let driver: TimerDriverKind

    typealias Samples = [TracingWorkload: [TracingSystem: [Sample]]]

    var runCount: Int { workloads.count * repetitions * TracingSystem.allCases.count }

    func run(progress: Progress) throws -> Samples {
        var samples: Samples = [:]
        for workload in workloads {
            for repetition in 0..<repetitions {
                let order = repetition % 2 == 0 ? TracingSystem.allCases : TracingSystem.allCases.reversed()
                for system in order {
                    progress.step("\(workload.rawValue) on \(system.displayName)")
                    let sample = try workload.run(on: system, size: size ?? workload.defaultSize, driver: driver)
                    samples[workload, default: [:]][system, default: []].append(sample)
                }
            }
        }
        return samples
    }
}

/// The medians of `schedule-traced`, and the cost of propagation per schedule: the wrapper's
/// figure minus the plain loop's in the same run.
struct TracingReport {
    let samples: TracingBench.Samples

    private func medianOf(_ workload: TracingWorkload, _ system: TracingSystem, _ metric: String) -> Double? {
        samples[workload]?[system]?.median(of: metric)
    }

    func table() -> String {
        var lines: [String] = []
        for workload in TracingWorkload.allCases where samples[workload] != nil {
            let runs = samples[workload]?[.plain]?.count ?? 0
            lines.append(
                "\(workload.rawValue) — medians of \(runs) run(s); ratio = row / LoopScheduler, on-loop ns/task"
            )
            lines.append(Report.row(["system"] + TracingWorkload.metrics + ["ratio"], Self.widths))
            for system in TracingSystem.allCases {
                let figures = TracingWorkload.metrics.map { medianOf(workload, system, $0).map(Report.format) ?? "-" }
                let ratio = medianOf(workload, system, "on-loop ns/task").flatMap { value in
                    medianOf(workload, .plain, "on-loop ns/task").map { Report.format(value / $0) }
                }
                lines.append(Report.row([system.displayName] + figures + [ratio ?? "-"], Self.widths))
            }
            for metric in ["on-loop ns/task", "cross ns/task"] {
                guard let plain = medianOf(workload, .plain, metric),
                    let bare = medianOf(workload, .wrapperNoContext, metric),
                    let carried = medianOf(workload, .wrapperWithContext, metric)
                else { continue }
                lines.append(
                    "propagation per schedule (\(metric)): \(Report.format(bare - plain)) ns with no context, "
                        + "\(Report.format(carried - plain)) ns with a context"
                )
            }
        }
        return lines.joined(separator: "\n")
    }

    func jsonObjects() -> [String] {
        Report.jsonObjects(
            samples,
            workloads: TracingWorkload.allCases,
            systems: { _ in TracingSystem.allCases },
            fields: { _, _ in [] },
            metrics: { _ in TracingWorkload.metrics }
        )
    }

    private static let widths = [22, 14, 21, 16, 23, 6]
}
#endif
