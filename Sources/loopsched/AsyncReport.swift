#if CommandLineTool
/// The async workloads' medians: one block per workload, one row per system, since each workload
/// compares its own systems and a two-column ratio would hide the baselines.
struct AsyncReport {
    let bench: AsyncBench
    let samples: AsyncBench.Samples

    private func medianOf(_ workload: AsyncWorkload, _ system: AsyncSystem, _ metric: String) -> Double? {
        let values = samples[workload]?[system]?.compactMap { $0.metrics[metric] } ?? []
        return values.isEmpty ? nil : median(values)
    }

    /// The system's name, with its count when it ran fewer operations than the others.
    private func label(_ workload: AsyncWorkload, _ system: AsyncSystem) -> String {
        let requested = bench.requestedSize(of: workload)
        let used = workload.size(on: system, requested: requested)
        return used == requested ? system.displayName : "\(system.displayName) (n=\(Self.count(used)))"
    }

    private static func count(_ n: Int) -> String {
        if n >= 1_000_000, n % 1_000_000 == 0 { return "\(n / 1_000_000)M" }
        if n >= 1_000, n % 1_000 == 0 { return "\(n / 1_000)k" }
        return "\(n)"
    }

    func table() -> String {
        var lines: [String] = []
        for workload in bench.workloads {
            guard let ran = samples[workload] else { continue }
            let heading = "\(workload.rawValue) (n=\(Self.count(bench.requestedSize(of: workload))))"
            let widths = [30] + workload.metrics.map { max(14, $0.count) }
            lines.append("")
            lines.append(Self.row([heading] + workload.metrics, widths))
            lines.append(Self.row(widths.map { String(repeating: "-", count: $0) }, widths))
            for system in workload.systems where ran[system] != nil {
                let cells = workload.metrics.map { medianOf(workload, system, $0).map(Report.format) ?? "–" }
                lines.append(Self.row([label(workload, system)] + cells, widths))
            }
        }
        return lines.joined(separator: "\n")
    }

    private static func row(_ columns: [String], _ widths: [Int]) -> String {
        zip(columns, widths).enumerated().map { index, pair in
            index == 0
                ? pair.0.padding(toLength: pair.1, withPad: " ", startingAt: 0)
                : String(repeating: " ", count: max(0, pair.1 - pair.0.count)) + pair.0
        }.joined(separator: "  ")
    }

    /// One object per workload and system, shaped as `Report.json()`'s.
    func jsonObjects(conditions: RunConditions) -> [String] {
        var objects: [String] = []
        for workload in bench.workloads {
            for system in workload.systems {
                guard let runs = samples[workload]?[system] else { continue }
                let figures = workload.metrics.compactMap { metric in
                    medianOf(workload, system, metric).map { "\(Report.quoted(metric)): \(Report.jsonNumber($0))" }
                }
                let failures = runs.flatMap(\.failures).map(Report.quoted)
                let n = workload.size(on: system, requested: bench.requestedSize(of: workload))
                objects.append(
                    "{\"workload\": \(Report.quoted(workload.rawValue)), "
                        + "\"scheduler\": \(Report.quoted(system.displayName)), \"n\": \(n), "
                        + "\(conditions.jsonFields), \"repetitions\": \(runs.count), "
                        + "\"medians\": {\(figures.joined(separator: ", "))}, "
                        + "\"failures\": [\(failures.joined(separator: ", "))]}"
                )
            }
        }
        return objects
    }
}
#endif
