#if CommandLineTool
/// A broken rule of the behaviour contract.
struct Violation: Equatable {
    /// The rule, as numbered in Docs/Design.md §4 (and "cross" for a disagreement between schedulers).
    var rule: String
    var scheduler: String
    var detail: String
}

/// Checks one trace against the contract's rules.
struct RuleChecker {
    let script: Script
    let trace: Trace
    let scheduler: CheckedScheduler

    func violations() -> [Violation] {
        var found: [Violation] = []
        func violation(_ rule: String, _ detail: String) {
            found.append(Violation(rule: rule, scheduler: scheduler.rawValue, detail: detail))
        }
        if trace.timedOut { violation("1/6", "some actions never ran within 30 s") }
        let byOp = Dictionary(grouping: trace.runs, by: \.op)

        // 1. Cancellation: nothing starts after dispose() returned; disposed-at-once never starts.
        for (op, disposedAt) in trace.disposedAt {
            for run in byOp[op] ?? [] where run.start > disposedAt {
                violation("1", "#\(op) started \(run.start - disposedAt) ns after dispose() returned")
            }
        }
        for op in trace.wonDisposal where !(byOp[op] ?? []).isEmpty {
            violation("1", "#\(op) ran although dispose() from another thread found it waiting")
        }
        // 2. Current scheduler during every action.
        for run in trace.runs where !run.wasCurrent && !run.inTask {
            violation("2", "#\(run.op) ran without its scheduler as Schedulers.current")
        }
        // 3. Serial: no two actions overlap.
        let ordered = trace.runs.filter { !$0.inTask }.sorted { $0.start < $1.start }
        for (previous, next) in zip(ordered, ordered.dropFirst()) where next.start < previous.end {
            violation("3", "#\(next.op) started while #\(previous.op) was still running")
        }
        // 3. Tasks from the driver thread start in scheduling order.
        let taskStarts = trace.runs.filter { if case .task = script.ops[$0.op] { true } else { false } }
            .sorted { $0.start < $1.start }.map(\.op)
        if taskStarts != taskStarts.sorted() { violation("3", "tasks started in the order \(taskStarts)") }
        // 3. Timers start in deadline order (deadlines at least 2 ms apart, to stay clear of the
        // time between the driver's clock reading and the scheduler's).
        let timerStarts = trace.runs.filter { if case .timer = script.ops[$0.op] { true } else { false } }
        for a in timerStarts {
            for b in timerStarts
            where trace.dueAtLeast[a.op]! + 2_000_000 < trace.dueAtLeast[b.op]! && a.start > b.start {
                violation("3", "#\(b.op) (due later) started before #\(a.op)")
            }
        }
        // 4. Never early.
        for run in trace.runs {
            switch script.ops[run.op] {
            case .timer, .timerDisposedByOtherThread, .sleep, .sleepCancelledByOtherThread:
                if let due = trace.dueAtLeast[run.op], run.start < due {
                    violation("4", "#\(run.op) started \(due - run.start) ns early")
                }
            case .wallTimer:
                if let due = trace.wallDue[run.op], run.wallStart < due {
                    violation("4", "#\(run.op) started \(due - run.wallStart) ns before its date")
                }
            default: break
            }
        }
        // 5. Periodic: the k-th tick is no earlier than the k-th grid point (`first` is a lower bound
        // of the real origin, which is all this needs); no catch-up burst: each tick is for a grid
        // point after every point the tick two before it covered, so t[i+2] − t[i] > interval (exact,
        // unlike counting grid cells from a lower-bound origin); no tick after the disposing one.
        for (op, value) in script.ops.enumerated() {
            guard case .periodic(let interval, let ticks, _) = value, let first = trace.dueAtLeast[op] else { continue }
            let runs = (byOp[op] ?? []).sorted { $0.start < $1.start }
            let period = Int64(interval) * 1_000
            for (index, run) in runs.enumerated() {
                if run.start < first + Int64(index) * period {
                    violation("5", "#\(op) tick \(index) started before its grid point")
                }
                if index >= 2, run.start - runs[index - 2].start <= period {
                    let offsets = runs.map { "\(($0.start - first) / 1_000)" }.joined(separator: ", ")
                    violation(
                        "5",
                        "#\(op) ran ticks \(index - 2)…\(index) within one interval: a catch-up burst "
                            + "(tick starts, µs after the first grid point: \(offsets))"
                    )
                }
            }
            if runs.count > ticks {
                violation("5", "#\(op) ticked \(runs.count) times after disposing itself at tick \(ticks)")
            }
        }
        // 6. Recursion and nesting: children run after their parent returned, in order.
        for (op, value) in script.ops.enumerated() {
            guard case .nested = value else { continue }
            let runs = byOp[op] ?? []
            guard let parent = runs.first(where: { $0.child == 0 }) else { continue }
            let children = runs.filter { $0.child > 0 }.sorted { $0.start < $1.start }
            if children.contains(where: { $0.start < parent.end }) {
                violation("3", "#\(op) ran a child inside its parent")
            }
            if children.map(\.child) != children.map(\.child).sorted() {
                violation("3", "#\(op) ran its children out of order")
            }
        }
        // Outcomes the contract fixes.
        for (op, value) in script.ops.enumerated() {
            guard let expected = value.expectedRuns else { continue }
            let actual = byOp[op]?.count ?? 0
            if actual != expected {
                violation("outcome", "#\(op) (\(value.description)) ran \(actual) times, expected \(expected)")
            }
        }
        return found
    }
}

/// Compares what ran on each scheduler: the same ops, the same number of times, where the contract
/// fixes the outcome.
func crossViolations(_ script: Script, _ traces: [CheckedScheduler: Trace]) -> [Violation] {
    var found: [Violation] = []
    for (op, value) in script.ops.enumerated() where value.expectedRuns != nil {
        let counts = traces.mapValues { trace in trace.runs.filter { $0.op == op }.count }
        if Set(counts.values).count > 1 {
            let detail = counts.sorted { $0.key.rawValue < $1.key.rawValue }.map { "\($0.key.rawValue) \($0.value)" }
            found.append(
                Violation(rule: "cross", scheduler: "all", detail: "#\(op) ran \(detail.joined(separator: ", ")) times")
            )
        }
    }
    return found
}
#endif
