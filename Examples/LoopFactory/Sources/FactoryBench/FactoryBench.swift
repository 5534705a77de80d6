// The four workloads of issue 29's executor comparison, in plain tasks (no executor preference):
// where they run is the program's default executor — Swift's own (Dispatch), or
// LoopExecutorFactory's loops. The same code is linked into both programs (LoopFactoryDemo with
// the factory, DefaultExecutorsBench without); scripts/bench-factory.sh runs them alternately.
import Foundation
@_spi(Workloads) import SchedulingWorkloads

/// Runs the workloads `repetitions` times each and prints one line per figure:
/// `<workload> <metric> <value>` (the medians of the repetitions), then `early <count>`.
public enum FactoryBench {
    /// The repetitions: the environment's `FACTORY_BENCH_REPETITIONS`, else 3.
    public static var defaultRepetitions: Int {
        ProcessInfo.processInfo.environment["FACTORY_BENCH_REPETITIONS"].flatMap { Int($0) } ?? 3
    }

    public static func run(repetitions: Int = defaultRepetitions, sleeps: Int = 2_000, cancelled: Int = 100_000) async throws {
        var figures: [String: [Double]] = [:]
        var early = 0
        for _ in 0..<repetitions {
            let sleep = await Task.detached {
                await Workloads.sleepRepeatedly(sleeps, interval: .milliseconds(1), home: nil) {
                    try await Task.sleep(for: $0)
                }
            }.value
            let lateness = sleep.lateness.sorted()
            early += lateness.filter { $0 < 0 }.count
            figures["task-sleep p50 µs", default: []].append(Double(quantile(lateness, 0.5)) / 1e3)
            figures["task-sleep p99 µs", default: []].append(Double(quantile(lateness, 0.99)) / 1e3)
            figures["task-sleep cpu µs/sleep", default: []].append(sleep.cpuSeconds * 1e6 / Double(sleeps))

            let cancel = try await onThread {
                try Workloads.sleepCancel(
                    cancelled,
                    start: .detached,
                    sleep: { try await Task.sleep(for: .seconds(30)) },
                    settle: { Thread.sleep(forTimeInterval: 0.05) }
                )
            }
            figures["sleep-cancel ns/pair", default: []].append(cancel.nanosecondsPerOperation)
            figures["sleep-cancel held B/sleep", default: []].append(Double(cancel.heldBytes) / Double(cancelled))

            let yields = await Task.detached { await Workloads.yieldRepeatedly(1_000_000, home: nil) }.value
            figures["yield ns", default: []].append(Double(yields.nanoseconds) / 1e6)

            let spawns = await Task.detached {
                await Workloads.spawnChildren(200_000, batch: Workloads.spawnBatch, home: nil)
            }.value
            figures["spawn ns/task", default: []].append(Double(spawns.nanoseconds) / 200_000)
        }
        for (name, values) in figures.sorted(by: { $0.key < $1.key }) {
            print("\(name) \(String(format: "%.1f", median(values)))")
        }
        print("early \(early)")
    }

    /// Runs a blocking body (the sleep-cancel workload waits on its countdowns) on a thread of its
    /// own, so no executor thread of the program is held.
    static func onThread<Result: Sendable>(_ body: @escaping @Sendable () throws -> Result) async throws -> Result {
        try await withCheckedThrowingContinuation { continuation in
            Thread { continuation.resume(with: Swift.Result { try body() }) }.start()
        }
    }

    static func quantile(_ sorted: [Int64], _ q: Double) -> Int64 {
        guard !sorted.isEmpty else { return 0 }
        return sorted[min(sorted.count - 1, max(0, Int((q * Double(sorted.count)).rounded(.up)) - 1))]
    }

    static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        return sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
    }
}
