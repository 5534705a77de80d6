#if CommandLineTool && NIO
@_spi(Workloads) import SchedulingWorkloads

/// The SwiftNIO comparison's medians: one block per workload, a line per pending count and
/// metric, a column per system, and the ratios of `EventLoopScheduler` to SwiftNIO's better API
/// and to `LoopScheduler`, each of medians of this run; then issue 38's targets.
struct NIOReport {
    let bench: NIOBench
    let samples: NIOBench.Samples

    private static let systems = EventLoopSystemKind.allCases
    private static let swiftNIO: [EventLoopSystemKind] = [.nioScheduleTask, .nioScheduleCallback]

    func medianOf(_ row: NIORow, _ system: EventLoopSystemKind, _ metric: String) -> Double? {
        samples[row]?[system]?.median(of: metric)
    }

    private func metrics(of row: NIORow) -> [String] {
        let names = Set(samples[row]?.values.flatMap { $0.flatMap { $0.metrics.keys } } ?? [])
        let preferred = [
            "ns/pair fifo", "ns/pair random", "held KB fifo", "held KB random", "ns/op fifo", "ns/op random",
            "ns/schedule", "wall s", "p50 µs", "p99 µs", "p50 µs n/10", "p99 µs n/10", "early", "bytes/timer",
            "bytes/handler timer",
        ]
        return names.sorted { (preferred.firstIndex(of: $0) ?? 99, $0) < (preferred.firstIndex(of: $1) ?? 99, $1) }
    }

    /// The sum of `metric` over all runs (nil if none reported it).
    private func total(_ row: NIORow, _ system: EventLoopSystemKind, _ metric: String) -> Double? {
        let values = samples[row]?[system]?.compactMap { $0.metrics[metric] } ?? []
        return values.isEmpty ? nil : values.reduce(0, +)
    }

    /// The smaller median of SwiftNIO's two APIs.
    private func bestNIO(_ row: NIORow, _ metric: String) -> Double? {
        Self.swiftNIO.compactMap { medianOf(row, $0, metric) }.min()
    }

    private static let widths = [5, 19, 18, 16, 20, 13, 8, 8]

    func table() -> String {
        var lines = [
            "SwiftNIO event loops — medians of \(bench.repetitions) alternated run(s), one NIOPosix loop thread per run; "
                + "ELS/NIO = EventLoopScheduler / the better of SwiftNIO's scheduleTask and scheduleCallback, "
                + "ELS/Loop = EventLoopScheduler / LoopScheduler (its own loop); lower is better",
            "SwiftNIO's random order up to \(Report.count(EventLoopSystemKind.linearRandomLimit)) pending (a linear cancel); "
                + "its re-arm is cancel + scheduleCallback, \(Report.count(EventLoopSystemKind.nioScheduleCallback.rearmOperations(random: true))) "
                + "operations in random order, \(Report.count(EventLoopSystemKind.eventLoopScheduler.rearmOperations(random: true))) elsewhere",
        ]
        let header = ["n", "metric"] + Self.systems.map(\.rawValue) + ["ELS/NIO", "ELS/Loop"]
        for workload in bench.workloads {
            lines.append("")
            lines.append(workload.rawValue)
            lines.append(Report.row(header, Self.widths, leftAligned: 2))
            lines.append(Report.row(Self.widths.map { String(repeating: "-", count: $0) }, Self.widths, leftAligned: 2))
            for row in bench.rows where row.workload == workload {
                for metric in metrics(of: row) {
                    let figures = Self.systems.map { medianOf(row, $0, metric).map(Report.format) ?? "–" }
                    let ours = medianOf(row, .eventLoopScheduler, metric)
                    let versusNIO = Self.ratio(ours, bestNIO(row, metric))
                    let versusLoop = Self.ratio(ours, medianOf(row, .loopScheduler, metric))
                    lines.append(
                        Report.row(
                            [Report.count(row.n), metric] + figures + [versusNIO, versusLoop],
                            Self.widths,
                            leftAligned: 2
                        )
                    )
                }
            }
        }
        lines.append("")
        lines += targetLines()
        return lines.joined(separator: "\n")
    }

    private static func ratio(_ value: Double?, _ reference: Double?) -> String {
        guard let value, let reference, reference != 0 else { return "–" }
        return Report.format(value / reference)
    }

    // MARK: Targets

    /// One of issue 38's targets: `EventLoopScheduler`'s median against a reference median times
    /// `limit` (a ratio), or against an absolute `limit` when there is no reference.
    private struct Target {
        let name: String
        let ours: Double?
        let reference: Double?
        let referenceName: String
        let limit: Double
        let loop: Double?

        var bound: Double? {
            if referenceName.isEmpty { return limit }
            return reference.map { $0 * limit }
        }

        /// The target's line, or nil when this run did not measure it.
        func line() -> String? {
            guard let ours, let bound else { return nil }
            let verdict = ours <= bound ? "holds" : "MISSES"
            var text = "  [\(verdict)] \(name): \(Report.format(ours))"
            if let reference, !referenceName.isEmpty {
                let ratio = reference == 0 ? "–" : Report.format(ours / reference)
                text += " vs \(referenceName) \(Report.format(reference)) = \(ratio)× (≤ \(Report.format(limit))×)"
            } else {
                text += " (≤ \(Report.format(limit)))"
            }
            if let loop {
                text +=
                    "; LoopScheduler \(Report.format(loop))\(loop == 0 ? "" : " (ELS/Loop \(Report.format(ours / loop)))")"
            }
            return text
        }
    }

    private func target(
        _ name: String,
        _ workload: NIOWorkload,
        _ n: Int,
        _ metric: String,
        versus reference: (value: Double?, name: String)?,
        limit: Double
    ) -> Target {
        let row = NIORow(workload: workload, n: n)
        return Target(
            name: name,
            ours: medianOf(row, .eventLoopScheduler, metric),
            reference: reference?.value,
            referenceName: reference?.name ?? "",
            limit: limit,
            loop: medianOf(row, .loopScheduler, metric)
        )
    }

    func targetLines() -> [String] {
        let cancel100k = NIORow(workload: .cancel, n: 100_000)
        let cancel1M = NIORow(workload: .cancel, n: 1_000_000)
        let rearm100k = NIORow(workload: .rearm, n: 100_000)
        let fire = NIORow(workload: .fire, n: 1_000_000)
        let memory = NIORow(workload: .memory, n: 1_000_000)
        let targets = [
            target(
                "schedule+cancel random, 100k (ns/pair)",
                .cancel,
                100_000,
                "ns/pair random",
                versus: (bestNIO(cancel100k, "ns/pair random"), "SwiftNIO's best"),
                limit: 0.05
            ),
            target(
                "schedule+cancel oldest-first, 1M (ns/pair)",
                .cancel,
                1_000_000,
                "ns/pair fifo",
                versus: (bestNIO(cancel1M, "ns/pair fifo"), "SwiftNIO's best"),
                limit: 0.25
            ),
            target(
                "re-arm random, 100k (ns/op)",
                .rearm,
                100_000,
                "ns/op random",
                versus: (medianOf(rearm100k, .nioScheduleCallback, "ns/op random"), "cancel + scheduleCallback"),
                limit: 0.05
            ),
            target(
                "re-arm oldest-first, 100k (ns/op)",
                .rearm,
                100_000,
                "ns/op fifo",
                versus: (medianOf(rearm100k, .nioScheduleCallback, "ns/op fifo"), "cancel + scheduleCallback"),
                limit: 0.25
            ),
            target(
                "schedule+cancel oldest-first, 1M against 10k (ns/pair)",
                .cancel,
                1_000_000,
                "ns/pair fifo",
                versus: (
                    medianOf(NIORow(workload: .cancel, n: 10_000), .eventLoopScheduler, "ns/pair fifo"), "its 10k"
                ),
                limit: 1.3
            ),
            target(
                "bytes per pending closure timer, 1M",
                .memory,
                1_000_000,
                "bytes/timer",
                versus: (medianOf(memory, .nioScheduleTask, "bytes/timer"), "scheduleTask"),
                limit: 1
            ),
            target(
                "bytes per pending handler timer, 1M",
                .memory,
                1_000_000,
                "bytes/handler timer",
                versus: (medianOf(memory, .nioScheduleCallback, "bytes/handler timer"), "scheduleCallback"),
                limit: 1
            ),
            target(
                "KB held after cancelling 1M oldest-first",
                .cancel,
                1_000_000,
                "held KB fifo",
                versus: nil,
                limit: 64
            ),
            target(
                "KB held after cancelling 1M in random order",
                .cancel,
                1_000_000,
                "held KB random",
                versus: nil,
                limit: 64
            ),
            Target(
                name: "early fires, 2.1M timers per run, all runs",
                ours: total(fire, .eventLoopScheduler, "early"),
                reference: nil,
                referenceName: "",
                limit: 0,
                loop: total(fire, .loopScheduler, "early")
            ),
            target(
                "lateness p50, 1M in 2 s (µs)",
                .fire,
                1_000_000,
                "p50 µs",
                versus: (medianOf(fire, .nioScheduleTask, "p50 µs"), "scheduleTask"),
                limit: 1.2
            ),
            target(
                "lateness p50, 100k in 2 s (µs)",
                .fire,
                1_000_000,
                "p50 µs n/10",
                versus: (medianOf(fire, .nioScheduleTask, "p50 µs n/10"), "scheduleTask"),
                limit: 1.2
            ),
        ]
        let measured = targets.compactMap { $0.line() }
        var lines = ["issue 38's targets for EventLoopScheduler (medians of this run):"] + measured
        if measured.count < targets.count {
            lines.append(
                "  (\(targets.count - measured.count) not measured by this run; every target: "
                    + "--workload nio-cancel --workload nio-rearm --workload nio-fire --workload nio-memory)"
            )
        }
        return lines
    }

    // MARK: JSON

    /// One object per row and system: the medians and the runs' failures.
    func jsonObjects(conditions: RunConditions) -> [String] {
        bench.rows.flatMap { row in
            Self.systems.compactMap { system -> String? in
                guard let runs = samples[row]?[system] else { return nil }
                let figures = metrics(of: row).compactMap { metric in
                    runs.median(of: metric).map { "\(Report.quoted(metric)): \(Report.jsonNumber($0))" }
                }
                let members = [
                    "\"workload\": \(Report.quoted(row.workload.rawValue))", "\"n\": \(row.n)",
                    "\"scheduler\": \(Report.quoted(system.rawValue))", conditions.jsonFields,
                    "\"repetitions\": \(runs.count)", "\"medians\": {\(figures.joined(separator: ", "))}",
                    "\"failures\": [\(runs.flatMap(\.failures).map(Report.quoted).joined(separator: ", "))]",
                ]
                return "{" + members.joined(separator: ", ") + "}"
            }
        }
    }

    /// Every failed self-check, named by row and system.
    var failures: [String] {
        samples.flatMap { row, bySystem in
            bySystem.flatMap { system, runs in
                runs.flatMap(\.failures).map {
                    "\(row.workload.rawValue) n=\(Report.count(row.n)) on \(system.rawValue): \($0)"
                }
            }
        }
    }
}
#endif
