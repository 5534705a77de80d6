#if CommandLineTool
/// The async workloads' medians: one block per workload, one row per system, since each workload
/// compares its own systems and a two-column ratio would hide the baselines.
struct AsyncReport {
    let bench: AsyncBench
    let samples: AsyncBench.Samples

    private func medianOf(_ workload: AsyncWorkload, _ system: AsyncSystem, _ metric: String) -> Double? {
        samples[workload]?[system]?.median(of: metric)
    }

    /// The system's name, with its count when it ran fewer operations than the others.
    private func label(_ workload: AsyncWorkload, _ system: AsyncSystem) -> String {
        let requested = bench.requestedSize(of: workload)
        let used = workload.size(on: system, requested: requested)
        return used == requested ? system.displayName : "\(system.displayName) (n=\(Report.count(used)))"
    }

    func table() -> String {
        var lines: [String] = []
        for workload in bench.workloads {
            guard let ran = samples[workload] else { continue }
            let heading = "\(workload.rawValue) (n=\(Report.count(bench.requestedSize(of: workload))))"
            let widths = [30] + workload.metrics.map { max(14, $0.count) }
            lines.append("")
            lines.append(Report.row([heading] + workload.metrics, widths))
            lines.append(Report.row(widths.map { String(repeating: "-", count: $0) }, widths))
            for system in workload.systems where ran[system] != nil {
                let cells = workload.metrics.map { medianOf(workload, system, $0).map(Report.format) ?? "–" }
                lines.append(Report.row([label(workload, system)] + cells, widths))
            }
        }
        return lines.joined(separator: "\n")
    }

    /// One object per workload and system, shaped as `Report.json()`'s.
    func jsonObjects(conditions: RunConditions) -> [String] {
        Report.jsonObjects(
            samples,
            workloads: bench.workloads,
            systems: \.systems,
            fields: { workload, system in
                [
                    "\"n\": \(workload.size(on: system, requested: bench.requestedSize(of: workload)))",
                    conditions.jsonFields,
                ]
            },
            metrics: \.metrics
        )
    }
}
#endif
