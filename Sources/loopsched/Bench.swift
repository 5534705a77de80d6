import ArgumentParser
import Foundation
import Scheduling

struct Bench: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Runs the workloads on LoopScheduler and QueueScheduler, interleaved, and prints medians.",
        discussion: Workload.allCases.map { "\($0.rawValue): \($0.summary)" }.joined(separator: "\n")
    )

    @Option(name: .customLong("workload"), help: "Workloads to run (repeatable; default: all).")
    var workloads: [Workload] = []

    @Option(help: "Size of each workload (tasks or timers; ticks for periodic-drift). Default: per workload.")
    var n: Int?

    @Option(help: "Repetitions of each workload on each scheduler; medians are reported.")
    var repetitions = 3

    @Option(help: "Seed for the random delays.")
    var seed: UInt64 = 1

    @Flag(help: "Print one JSON object per workload and scheduler instead of the table.")
    var json = false

    @Flag(help: "Let the allocator return freed memory to the system between bursts (the kernel then zeroes it again).")
    var coldHeap = false

    @Option(help: "Write the lateness distributions of both schedulers as an SVG chart to this file.")
    var plot: String?

    mutating func validate() throws {
        if repetitions < 1 { throw ValidationError("--repetitions must be at least 1") }
        if let n, n < 1 { throw ValidationError("--n must be at least 1") }
    }

    func run() throws {
        let selected = workloads.isEmpty ? Workload.allCases : workloads
        if !coldHeap { _ = Measure.keepFreedHeap() }
        let progress = Progress(total: selected.count * repetitions * BenchTarget.allCases.count)
        var samples: [Workload: [BenchTarget: [Sample]]] = [:]
        var failures: [String] = []
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
                    let targets = try order.map { ($0, try $0.make()) }
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
                        let running = try target.make()
                        results.append((target, workload.run(on: running, size: size, seed: runSeed)))
                        running.shutdown()
                    }
                }
                for (target, sample) in results {
                    samples[workload, default: [:]][target, default: []].append(sample)
                    failures += sample.failures.map { "\(workload.rawValue) on \(target.displayName): \($0)" }
                }
            }
        }
        progress.finish()
        let report = Report(workloads: selected, samples: samples, repetitions: repetitions)
        print(json ? report.json() : report.table())
        if let plot {
            try LatencyPlot(samples: samples).svg().write(toFile: plot, atomically: true, encoding: .utf8)
            if !json { print("Lateness chart written to \(plot)") }
        }
        if !failures.isEmpty {
            FileHandle.standardError.write(
                Data(("self-check failed:\n" + failures.joined(separator: "\n") + "\n").utf8)
            )
            throw ExitCode(1)
        }
    }
}

extension Workload: ExpressibleByArgument {}

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
