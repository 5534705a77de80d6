#if CommandLineTool
import ArgumentParser
import Foundation
import LoopScheduling
import Scheduling
@_spi(Workloads) import SchedulingWorkloads

struct Bench: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract:
            "Runs the workloads on LoopScheduler and QueueScheduler (and, built with the trait NIO, on SwiftNIO's "
            + "event loops), interleaved, and prints medians.",
        discussion: WorkloadSelection.allCases.map { "\($0.name): \($0.summary)" }.joined(separator: "\n")
    )

    @Option(name: .customLong("workload"), help: "Workloads to run (repeatable; default: all).")
    var workloads: [WorkloadSelection] = []

    @Option(
        help: """
            Size of each workload (tasks, timers or calls; ticks for periodic-drift; pending timers for \
            nio-*). Default: per workload.
            """
    )
    var n: Int?

    #if NIO
    @Option(
        name: .customLong("nio-system"),
        help: "Systems of the nio-* workloads (repeatable; default: all)."
    )
    var nioSystems: [EventLoopSystemKind] = []
    #endif

    @Flag(
        help: """
            Run the async workloads at their full counts (1M calls) rather than the default run's (200k), \
            and the SwiftNIO comparison (trait NIO) at every size rather than nio-cancel and nio-rearm at 100k.
            """
    )
    var full = false

    @Option(help: "Repetitions of each workload on each scheduler; medians are reported.")
    var repetitions = 3

    @Option(help: "Seed for the random delays.")
    var seed: UInt64 = 1

    @Option(help: "Timer driver of every LoopScheduler; the default is this platform's preferred one.")
    var driver = DriverChoice(.preferred)

    @Flag(help: "Print one JSON object per workload and scheduler instead of the table.")
    var json = false

    @Flag(
        help: """
            Keep freed memory in the process (mallopt) so bursts measure steady state rather than the \
            kernel zeroing pages again. Off by default: users run untuned processes.
            """
    )
    var warmHeap = false

    @Option(help: "Write the lateness distributions of both schedulers as an SVG chart to this file.")
    var plot: String?

    mutating func validate() throws {
        if repetitions < 1 { throw ValidationError("--repetitions must be at least 1") }
        if let n, n < 1 { throw ValidationError("--n must be at least 1") }
    }

    func run() throws {
        let selected = workloads.isEmpty ? WorkloadSelection.allCases : workloads
        let timerWorkloads = selected.compactMap { if case .timers(let workload) = $0 { workload } else { nil } }
        let asyncBench = AsyncBench(
            workloads: selected.compactMap { if case .async(let workload) = $0 { workload } else { nil } },
            repetitions: repetitions,
            size: n,
            full: full,
            driver: driver.kind
        )
        let tracingBench = TracingBench(
            workloads: selected.compactMap { if case .tracing(let workload) = $0 { workload } else { nil } },
            repetitions: repetitions,
            size: n,
            driver: driver.kind
        )
        let conditions = RunConditions(heap: HeapMode.apply(warm: warmHeap), driver: driver)
        var runCount =
            timerWorkloads.count * repetitions * BenchTarget.allCases.count + asyncBench.plan.count
            + tracingBench.runCount
        #if NIO
        // Without --workload (`make run`), the SwiftNIO comparison's two key rows only: schedule +
        // cancel and re-arm at 100k pending (about a minute); a --workload nio-* runs every size.
        let nioDefault = workloads.isEmpty && !full
        let nioBench = NIOBench(
            workloads: selected.compactMap { selection -> NIOWorkload? in
                guard case .nio(let workload) = selection else { return nil }
                return !nioDefault || workload == .cancel || workload == .rearm ? workload : nil
            },
            repetitions: repetitions,
            size: n ?? (nioDefault ? 100_000 : nil),
            systems: nioSystems.isEmpty ? EventLoopSystemKind.allCases : nioSystems,
            seed: seed,
            driver: driver.kind
        )
        runCount += nioBench.runCount
        #endif
        let progress = Progress(total: runCount)
        let samples = try runTimerWorkloads(timerWorkloads, progress: progress)
        // Before the async workloads, whose cancelled Task.sleeps expire 30 s after them.
        #if NIO
        let nioReport = NIOReport(bench: nioBench, samples: nioBench.run(progress: progress))
        #endif
        let asyncSamples = try asyncBench.run(progress: progress)
        let tracingSamples = try tracingBench.run(progress: progress)
        progress.finish()
        let tracingReport = TracingReport(samples: tracingSamples)
        let report = Report(
            workloads: timerWorkloads,
            samples: samples,
            repetitions: repetitions,
            conditions: conditions
        )
        let asyncReport = AsyncReport(bench: asyncBench, samples: asyncSamples)
        var jsonObjects =
            report.jsonObjects() + asyncReport.jsonObjects(conditions: conditions) + tracingReport.jsonObjects()
        var table =
            report.table() + (asyncSamples.isEmpty ? "" : "\n" + asyncReport.table())
            + (tracingSamples.isEmpty ? "" : "\n\n" + tracingReport.table())
        #if NIO
        jsonObjects += nioReport.jsonObjects(conditions: conditions)
        if !nioReport.samples.isEmpty { table += "\n\n" + nioReport.table() }
        #endif
        print(json ? jsonObjects.joined(separator: "\n") : table)
        if let plot {
            try LatencyPlot(samples: samples).svg().write(toFile: plot, atomically: true, encoding: .utf8)
            if !json { print("Lateness chart written to \(plot)") }
        }
        var failures = samples.flatMap { workload, byTarget in
            byTarget.flatMap { target, runs in
                runs.flatMap(\.failures).map { "\(workload.rawValue) on \(target.displayName): \($0)" }
            }
        }
        failures += asyncSamples.flatMap { workload, bySystem in
            bySystem.flatMap { system, runs in
                runs.flatMap(\.failures).map { "\(workload.rawValue) on \(system.displayName): \($0)" }
            }
        }
        failures += tracingSamples.flatMap { workload, bySystem in
            bySystem.flatMap { system, runs in
                runs.flatMap(\.failures).map { "\(workload.rawValue) on \(system.displayName): \($0)" }
            }
        }
        #if NIO
        failures += nioReport.failures
        #endif
        if !failures.isEmpty {
            FileHandle.standardError.write(
                Data(("self-check failed:\n" + failures.sorted().joined(separator: "\n") + "\n").utf8)
            )
            throw ExitCode(1)
        }
    }

    private func runTimerWorkloads(
        _ selected: [Workload],
        progress: Progress
    ) throws -> [Workload: [BenchTarget: [Sample]]] {
        var samples: [Workload: [BenchTarget: [Sample]]] = [:]
        for repetition in 0..<repetitions {
            for workload in selected {
                // Alternate which scheduler goes first, so neither always runs on a warmer machine.
                let order = repetition % 2 == 0 ? BenchTarget.allCases : BenchTarget.allCases.reversed()
                let size = n ?? workload.defaultSize
                let runSeed = seed &+ UInt64(repetition)
                var results: [(BenchTarget, Sample)] = []
                if workload.isMostlyIdle {
                    // A periodic timer sleeps between ticks: both schedulers run side by side.
                    progress.step("\(workload.rawValue) on both schedulers")
                    progress.step("")
                    let targets = try order.map { ($0, try $0.make(driver: driver.kind)) }
                    let collected = LockedValue<[(BenchTarget, Sample)]>([])
                    DispatchQueue.concurrentPerform(iterations: targets.count) { index in
                        let (target, running) = targets[index]
                        let sample = workload.run(on: running, size: size, seed: runSeed)
                        collected.withLock { $0.append((target, sample)) }
                    }
                    for (_, running) in targets { running.shutdown() }
                    results = collected.withLock { $0 }
                } else {
                    for target in order {
                        progress.step("\(workload.rawValue) on \(target.displayName)")
                        let running = try target.make(driver: driver.kind)
                        results.append((target, workload.run(on: running, size: size, seed: runSeed)))
                        running.shutdown()
                    }
                }
                for (target, sample) in results {
                    samples[workload, default: [:]][target, default: []].append(sample)
                }
            }
        }
        return samples
    }
}

/// A progress bar on standard error, drawn only when it is a terminal.
final class Progress {
    private let total: Int
    private var done = 0
    private let enabled = isatty(STDERR_FILENO) == 1

    init(total: Int) {
        self.total = total
    }

    func step(_ label: String) {
        defer { done += 1 }
        guard enabled else { return }
        let width = 30
        let filled = width * done / max(total, 1)
        let bar = String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled)
        let line = "\r[\(bar)] \(done + 1)/\(total) \(label)".padding(toLength: 78, withPad: " ", startingAt: 0)
        FileHandle.standardError.write(Data(line.utf8))
    }

    func finish() {
        guard enabled else { return }
        FileHandle.standardError.write(Data(("\r" + String(repeating: " ", count: 78) + "\r").utf8))
    }
}
#endif
