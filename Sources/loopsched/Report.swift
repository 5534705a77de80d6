#if CommandLineTool
import Foundation

/// A system a report has a row or an object for.
protocol BenchSystemName: Hashable {
    var displayName: String { get }
}

extension BenchTarget: BenchSystemName {}
extension AsyncSystem: BenchSystemName {}
extension TracingSystem: BenchSystemName {}

/// Medians of every metric, laid out as a table or as JSON.
struct Report {
    let workloads: [Workload]
    let samples: [Workload: [BenchTarget: [Sample]]]
    let repetitions: Int
    let conditions: RunConditions

    /// The metric names of a workload, in the order its samples first reported them.
    private func metrics(of workload: Workload) -> [String] {
        let names = samples[workload]?.values.flatMap { $0.flatMap { $0.metrics.keys } } ?? []
        return Array(Set(names)).sorted(by: Self.metricOrder)
    }

    private static func metricOrder(_ a: String, _ b: String) -> Bool {
        let preferred = [
            "ns/task", "ns/schedule", "wall s", "cpu s", "ns/pair fifo", "ns/pair random", "peak MB",
            "held MB after", "last-tick drift ms", "tick p50 µs", "tick p99 µs", "p50 µs", "p99 µs",
            "p99.9 µs", "max µs", "early", "bytes/timer", "ns/op fifo", "ns/op random",
        ]
        return (preferred.firstIndex(of: a) ?? 99, a) < (preferred.firstIndex(of: b) ?? 99, b)
    }

    func medianOf(_ workload: Workload, _ target: BenchTarget, _ metric: String) -> Double? {
        samples[workload]?[target]?.median(of: metric)
    }

    func table() -> String {
        var lines = [
            "loopsched bench — medians of \(repetitions) run(s) each, interleaved; ratio = Loop / Queue (lower is better)",
            conditions.summary,
            "",
            Self.row(["workload", "metric", "LoopScheduler", "QueueScheduler", "ratio"], Self.widths, leftAligned: 2),
            Self.row(Self.widths.map { String(repeating: "-", count: $0) }, Self.widths, leftAligned: 2),
        ]
        if workloads.isEmpty { return lines.prefix(2).joined(separator: "\n") }
        for workload in workloads {
            var first = true
            for metric in metrics(of: workload) {
                let loop = medianOf(workload, .loop, metric)
                let queue = medianOf(workload, .queue, metric)
                let ratio: String
                if let loop, let queue, queue != 0 { ratio = Self.format(loop / queue) } else { ratio = "–" }
                lines.append(
                    Self.row(
                        [
                            first ? workload.rawValue : "", metric, loop.map(Self.format) ?? "–",
                            queue.map(Self.format) ?? "–", ratio,
                        ],
                        Self.widths,
                        leftAligned: 2
                    )
                )
                first = false
            }
        }
        return lines.joined(separator: "\n")
    }

    private static let widths = [15, 19, 14, 14, 7]

    /// One line of a table: the first `leftAligned` columns padded on the right, the others
    /// (figures) on the left.
    static func row(_ columns: [String], _ widths: [Int], leftAligned: Int = 1) -> String {
        zip(columns, widths).enumerated().map { index, pair in
            index < leftAligned
                ? pair.0.padding(toLength: pair.1, withPad: " ", startingAt: 0)
                : String(repeating: " ", count: max(0, pair.1 - pair.0.count)) + pair.0
        }.joined(separator: "  ")
    }

    /// A size as the tables print it: 10k, 1M, or the number.
    static func count(_ n: Int) -> String {
        if n >= 1_000_000, n % 1_000_000 == 0 { return "\(n / 1_000_000)M" }
        if n >= 1_000, n % 1_000 == 0 { return "\(n / 1_000)k" }
        return "\(n)"
    }

    static func format(_ value: Double) -> String {
        if value == 0 { return "0" }
        if abs(value) >= 100 { return String(format: "%.0f", value) }
        if abs(value) >= 10 { return String(format: "%.1f", value) }
        return String(format: "%.3g", value)
    }

    func jsonObjects() -> [String] {
        Self.jsonObjects(
            samples,
            workloads: workloads,
            systems: { _ in BenchTarget.allCases },
            fields: { _, _ in [conditions.jsonFields] },
            metrics: metrics(of:)
        )
    }

    /// The objects of `--json`: for each workload and system that ran, in the given orders, the
    /// medians of the workload's `metrics` and the runs' failures; `fields` (`"key": value`
    /// pairs) go between the names and the runs.
    static func jsonObjects<Workload: RawRepresentable<String> & Hashable, System: BenchSystemName>(
        _ samples: [Workload: [System: [Sample]]],
        workloads: [Workload],
        systems: (Workload) -> [System],
        fields: (Workload, System) -> [String],
        metrics: (Workload) -> [String]
    ) -> [String] {
        workloads.flatMap { workload in
            systems(workload).compactMap { system in
                samples[workload]?[system].map { runs in
                    let figures = metrics(workload).compactMap { metric in
                        runs.median(of: metric).map { "\(quoted(metric)): \(jsonNumber($0))" }
                    }
                    let failures = runs.flatMap(\.failures).map(quoted)
                    let members =
                        ["\"workload\": \(quoted(workload.rawValue))", "\"scheduler\": \(quoted(system.displayName))"]
                        + fields(workload, system) + [
                            "\"repetitions\": \(runs.count)", "\"medians\": {\(figures.joined(separator: ", "))}",
                            "\"failures\": [\(failures.joined(separator: ", "))]",
                        ]
                    return "{" + members.joined(separator: ", ") + "}"
                }
            }
        }
    }

    static func quoted(_ text: String) -> String {
        "\"" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
    }

    static func jsonNumber(_ value: Double) -> String {
        value.isFinite ? String(value) : "null"
    }
}
#endif
