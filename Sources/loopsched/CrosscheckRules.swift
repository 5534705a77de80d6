#if CommandLineTool
import Scheduling

/// A broken rule of the behaviour contract.
struct Violation: Equatable {
    /// The rule, as numbered in Docs/Design.md §4; "late" for a timer that started later than its
    /// deadline, its allowed leeway and the scheduler's ``CheckedScheduler/lateness`` (rules 4
    /// and 5: a leeway only coalesces wake-ups); "outcome" for an op that ran another number of
    /// times than the contract fixes; "cross" for a disagreement between schedulers.
    var rule: String
    var scheduler: String
    /// The op it is about, if one: the shrinker keeps that op and looks for the same violation of it.
    var op: Int?
    var detail: String
}

/// Checks one trace against the contract's rules.
struct RuleChecker {
    let script: Script
    let trace: Trace
    let scheduler: CheckedScheduler

    func violations() -> [Violation] {
        var found: [Violation] = []
        func violation(_ rule: String, _ op: Int?, _ detail: String) {
            found.append(Violation(rule: rule, scheduler: scheduler.rawValue, op: op, detail: detail))
        }
        let byOp = Dictionary(grouping: trace.runs, by: \.op)

        // 1. Cancellation: nothing starts after a dispose() that found it waiting returned;
        // disposed-at-once never starts.
        for (op, disposedAt) in trace.disposedAt {
            for run in byOp[op] ?? [] where run.start > disposedAt {
                violation("1", op, "#\(op) started \(run.start - disposedAt) ns after dispose() returned")
            }
        }
        for op in trace.wonDisposal where !(byOp[op] ?? []).isEmpty {
            violation("1", op, "#\(op) ran although dispose() from another thread found it waiting")
        }
        // 2. Current scheduler during every action.
        for run in trace.runs where !run.wasCurrent && !run.inTask {
            violation("2", run.op, "#\(run.op) ran without its scheduler as Schedulers.current")
        }
        // 3. Order, on serial schedulers.
        if scheduler.isSerial { orderViolations(byOp, violation) }
        // 4. Never early; and never later than the deadline, the allowed leeway and the lateness.
        for run in trace.runs {
            switch script.ops[run.op] {
            case .timer, .timerDisposedByOtherThread, .sleep, .sleepCancelledByOtherThread:
                if let due = trace.dueAtLeast[run.op], run.start < due {
                    violation("4", run.op, "#\(run.op) started \(due - run.start) ns early")
                }
            case .wallTimer:
                if let due = trace.wallDue[run.op], run.wallStart < due {
                    violation("4", run.op, "#\(run.op) started \(due - run.wallStart) ns before its date")
                }
            default: break
            }
        }
        lateViolations(byOp, violation)
        periodicViolations(byOp, violation)
        // 9. Huge values saturate: the timer stayed pending until the driver disposed it.
        for (op, pending) in trace.pendingAtEnd.sorted(by: { $0.key < $1.key }) where !pending {
            violation("9", op, "#\(op) (\(script.ops[op].description)) was no longer pending when disposed at the end")
        }
        // Outcomes the contract fixes.
        for (op, value) in script.ops.enumerated() where scheduler.runs(value) {
            guard let expected = script.expectedRuns(op) else { continue }
            let actual = byOp[op]?.count ?? 0
            if actual != expected {
                let waited = trace.timedOut.map { " (the driver waited \($0.nanoseconds / 1_000_000) ms for it)" }
                violation(
                    "outcome",
                    op,
                    "#\(op) (\(value.description)) ran \(actual) times, expected \(expected)"
                        + (actual < expected ? waited ?? "" : "")
                )
            }
        }
        return found
    }

    /// Rule 3: no two actions overlap; tasks from the driver thread start in scheduling order;
    /// zero-leeway timers in deadline order; nested children after their parent, in order.
    private func orderViolations(_ byOp: [Int: [Trace.Run]], _ violation: (String, Int?, String) -> Void) {
        let ordered = trace.runs.filter { !$0.inTask }.sorted { $0.start < $1.start }
        for (previous, next) in zip(ordered, ordered.dropFirst()) where next.start < previous.end {
            violation("3", next.op, "#\(next.op) started while #\(previous.op) was still running")
        }
        let taskStarts = trace.runs.filter { if case .task = script.ops[$0.op] { true } else { false } }
            .sorted { $0.start < $1.start }.map(\.op)
        if taskStarts != taskStarts.sorted() { violation("3", nil, "tasks started in the order \(taskStarts)") }
        // Deadlines at least 2 ms apart (the latest a's can be, the earliest b's), to stay clear of
        // the time between the driver's clock reading and the scheduler's. A leeway may move a
        // timer's wake-up, so only zero-leeway timers count.
        let timerStarts = trace.runs.filter {
            if case .timer(_, .zero) = script.ops[$0.op] { true } else { false }
        }
        for a in timerStarts {
            for b in timerStarts
            where Nanoseconds.adding(dueAtMost(a.op)!, 2_000_000) < trace.dueAtLeast[b.op]! && a.start > b.start {
                violation("3", b.op, "#\(b.op) (due later) started before #\(a.op)")
            }
        }
        for (op, value) in script.ops.enumerated() {
            guard case .nested = value else { continue }
            let runs = byOp[op] ?? []
            guard let parent = runs.first(where: { $0.child == 0 }) else { continue }
            let children = runs.filter { $0.child > 0 }.sorted { $0.start < $1.start }
            if children.contains(where: { $0.start < parent.end }) {
                violation("3", op, "#\(op) ran a child inside its parent")
            }
            if children.map(\.child) != children.map(\.child).sorted() {
                violation("3", op, "#\(op) ran its children out of order")
            }
        }
    }

    /// Rules 4 and 5, the other side: a leeway only lets a wake-up coalesce, so a timer starts by
    /// its deadline plus the leeway it is allowed (none when it is lone) plus the scheduler's
    /// lateness; a negative delay or a past date means as soon as possible. Tick k+1 of a periodic
    /// timer is due at the first grid point after tick k ended, at most an interval later.
    private func lateViolations(_ byOp: [Int: [Trace.Run]], _ violation: (String, Int?, String) -> Void) {
        let lateness = scheduler.lateness
        func check(_ op: Int, _ run: Trace.Run, start: Int64, bound: Int64, what: String) {
            guard start > bound else { return }
            let leeway = script.allowedLeeway(op)
            violation(
                "late",
                op,
                "#\(op) (\(script.ops[op].description))\(what) started \((start - bound) / 1_000) µs after "
                    + "its deadline + allowed leeway \(leeway.text) + lateness \(lateness / 1_000_000) ms"
            )
        }
        for (op, value) in script.ops.enumerated() {
            let leeway = script.allowedLeeway(op).nanoseconds
            let runs = (byOp[op] ?? []).sorted { $0.start < $1.start }
            switch value {
            case .timer, .timerDisposedByOtherThread:
                guard let due = dueAtMost(op) else { continue }
                let bound = Nanoseconds.adding(Nanoseconds.adding(due, leeway), lateness)
                for run in runs { check(op, run, start: run.start, bound: bound, what: "") }
            case .wallTimer:
                guard let date = trace.wallDue[op], let returned = trace.returned[op] else { continue }
                let bound = Nanoseconds.adding(max(date, returned.wall), lateness)
                for run in runs { check(op, run, start: run.wallStart, bound: bound, what: "") }
            case .periodic(_, let interval, _, _, _):
                guard var due = dueAtMost(op) else { continue }
                for (index, run) in runs.enumerated() {
                    let bound = Nanoseconds.adding(Nanoseconds.adding(due, leeway), lateness)
                    check(op, run, start: run.start, bound: bound, what: " tick \(index)")
                    due = Nanoseconds.adding(run.end, interval.nanoseconds)
                }
            default: continue
            }
        }
    }

    /// The latest op `index`'s (first) deadline can be: its delay after `schedule` returned.
    private func dueAtMost(_ index: Int) -> Int64? {
        guard let returned = trace.returned[index]?.monotonic else { return nil }
        switch script.ops[index] {
        case .timer(let delay, _), .timerDisposedByOtherThread(let delay, _), .periodic(let delay, _, _, _, _):
            return Nanoseconds.adding(returned, Nanoseconds.delay(delay))
        default: return nil
        }
    }

    /// Rule 5: the k-th tick is no earlier than the k-th grid point (`first` is a lower bound of
    /// the real origin, which is all this needs); no catch-up burst: each tick is for a grid point
    /// after every point the tick two before it covered, so t[i+2] − t[i] > interval (exact, unlike
    /// counting grid cells from a lower-bound origin); no tick after the disposing one.
    private func periodicViolations(_ byOp: [Int: [Trace.Run]], _ violation: (String, Int?, String) -> Void) {
        for (op, value) in script.ops.enumerated() {
            guard case .periodic(_, let interval, _, let ticks, _) = value, let first = trace.dueAtLeast[op] else {
                continue
            }
            let runs = (byOp[op] ?? []).sorted { $0.start < $1.start }
            let period = interval.nanoseconds
            for (index, run) in runs.enumerated() {
                if run.start < Nanoseconds.adding(first, Nanoseconds.multiplying(Int64(index), period)) {
                    violation("5", op, "#\(op) tick \(index) started before its grid point")
                }
                if index >= 2, run.start - runs[index - 2].start <= period {
                    let offsets = runs.map { "\(($0.start - first) / 1_000)" }.joined(separator: ", ")
                    violation(
                        "5",
                        op,
                        "#\(op) ran ticks \(index - 2)…\(index) within one interval: a catch-up burst "
                            + "(tick starts, µs after the first grid point: \(offsets))"
                    )
                }
            }
            if runs.count > ticks {
                violation("5", op, "#\(op) ticked \(runs.count) times after disposing itself at tick \(ticks)")
            }
        }
    }
}

/// Compares what ran on each scheduler: the same ops, the same number of times, where the contract
/// fixes the outcome (among the schedulers that run the op).
func crossViolations(_ script: Script, _ traces: [CheckedScheduler: Trace]) -> [Violation] {
    var found: [Violation] = []
    for (op, value) in script.ops.enumerated() where script.expectedRuns(op) != nil {
        let counts = traces.filter { $0.key.runs(value) }.mapValues { trace in
            trace.runs.filter { $0.op == op }.count
        }
        if Set(counts.values).count > 1 {
            let detail = counts.sorted { $0.key.rawValue < $1.key.rawValue }.map { "\($0.key.rawValue) \($0.value)" }
            let ran = "#\(op) ran \(detail.joined(separator: ", ")) times"
            found.append(Violation(rule: "cross", scheduler: "all", op: op, detail: ran))
        }
    }
    return found
}
#endif
