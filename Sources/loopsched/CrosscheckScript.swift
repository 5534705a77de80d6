#if CommandLineTool
import Scheduling

/// One step of a cross-check script. Ids are the op's index in the script.
///
/// Times are `Duration`s, extremes included: a negative delay means "as soon as possible", a far
/// one (``Duration/isFar``: an hour, ten years, `.seconds(Int64.max)`) never comes within a script
/// and must stay pending and disposable, and a huge leeway (``Duration/isHugeLeeway``) lets a
/// timer's wake-up move to any later one within it.
enum Op: Equatable {
    /// `schedule { }` from the driver thread.
    case task
    /// `schedule(after:)` from the driver thread; with a leeway, `schedule(after:leeway:handler:)`
    /// (the one one-shot timer with a leeway: a coalescing allowance on LoopScheduler, ignored by the
    /// Dispatch and test schedulers' default).
    case timer(delay: Duration, leeway: Duration)
    /// `schedule(at:)` from the driver thread.
    case wallTimer(WallDate)
    /// `schedule(after: delay, repeatingEvery: interval, leeway:)`, disposing itself from inside its
    /// tick number `ticks`; its first tick busies the scheduler for `stallIntervals` intervals, so
    /// later grid points must be skipped.
    case periodic(delay: Duration, interval: Duration, leeway: Duration, ticks: Int, stallIntervals: Int)
    /// A timer disposed by the driver right after scheduling it: it must never start.
    case timerDisposedAtOnce(delay: Duration)
    /// A timer that another thread disposes after `after`: it must not start after that.
    case timerDisposedByOtherThread(delay: Duration, after: Duration)
    /// A task that schedules `children` tasks on its own scheduler from inside its action.
    case nested(children: Int)
    /// `scheduleRecursive` running `runs` times.
    case recursive(runs: Int)
    /// A task awaiting `calls` calls to an actor pinned to the scheduler (from the global pool;
    /// on the test scheduler, from a task that prefers it): each call is one run, on the scheduler.
    case actorCalls(calls: Int)
    /// A task that awaits `sleep(for:)` on the scheduler, then records one run (in the task).
    case sleep(delay: Duration)
    /// A sleeping task that another thread cancels after `after`: if the sleep returns normally
    /// it must not be early; cancelled, it throws.
    case sleepCancelledByOtherThread(delay: Duration, after: Duration)
    /// The driver sleeps this long (real time; on the test scheduler it advances virtual time by
    /// it) before the next op, so a timer scheduled before can become due first.
    case pause(Duration)

    /// The date of a wall-clock timer.
    enum WallDate: Equatable {
        /// `scheduler.now + offset`.
        case offset(Duration)
        /// `Date.distantFuture`: saturates, stays pending until disposed.
        case distantFuture
        /// `Date.distantPast`: as soon as possible.
        case distantPast
    }

    /// Whether the op schedules timers only (or pauses): the ops a ``CheckedScheduler`` that is
    /// not serial runs. Tasks, nesting, recursion and actors need a serial scheduler.
    var isTimerOp: Bool {
        switch self {
        case .task, .nested, .recursive, .actorCalls: false
        default: true
        }
    }

    /// Whether the op puts a timer in the scheduler that can come due within a script: what keeps
    /// a leeway'd timer from being lone (see ``Script/isLone(_:)``). Saturated timers never come
    /// due (never armed), so they are no company.
    var isTimerCompany: Bool {
        switch self {
        case .task, .nested, .recursive, .actorCalls, .pause: false
        case .timer(let delay, _), .timerDisposedAtOnce(let delay): !delay.isSaturated
        case .wallTimer(let date): date != .distantFuture
        case .periodic(let delay, _, _, _, _): !delay.isSaturated
        case .timerDisposedByOtherThread, .sleep, .sleepCancelledByOtherThread: true
        }
    }

    /// The op's leeway (zero for ops without one).
    var leeway: Duration {
        switch self {
        case .timer(_, let leeway), .periodic(_, _, let leeway, _, _): leeway
        default: .zero
        }
    }

    /// Whether the op is a timer that must not run within the script: a far first deadline.
    var isFar: Bool {
        switch self {
        case .timer(let delay, _), .periodic(let delay, _, _, _, _): delay.isFar
        case .wallTimer(.offset(let offset)): offset.isFar
        case .wallTimer(.distantFuture): true
        default: false
        }
    }

    var description: String {
        switch self {
        case .task: "task"
        case .timer(let delay, let leeway):
            leeway == .zero
                ? "timer after \(delay.text)" : "timer after \(delay.text), leeway \(leeway.text) (handler)"
        case .wallTimer(.offset(let offset)): "wall-clock timer at now + \(offset.text)"
        case .wallTimer(.distantFuture): "wall-clock timer at Date.distantFuture"
        case .wallTimer(.distantPast): "wall-clock timer at Date.distantPast"
        case .periodic(let delay, let interval, let leeway, let ticks, let stall):
            "periodic after \(delay.text) every \(interval.text), leeway \(leeway.text), first tick stalling "
                + "\(stall) intervals, disposed from inside tick \(ticks)"
        case .timerDisposedAtOnce(let delay): "timer after \(delay.text), disposed at once"
        case .timerDisposedByOtherThread(let delay, let after):
            "timer after \(delay.text), disposed by another thread after \(after.text)"
        case .nested(let children): "task scheduling \(children) tasks from inside"
        case .recursive(let runs): "recursive, \(runs) runs"
        case .actorCalls(let calls): "\(calls) calls to an actor pinned to the scheduler"
        case .sleep(let delay): "a task sleeping \(delay.text)"
        case .sleepCancelledByOtherThread(let delay, let after):
            "a task sleeping \(delay.text), cancelled by another thread after \(after.text)"
        case .pause(let pause): "pause \(pause.text)"
        }
    }
}

/// A cross-check script: ops the driver thread issues in order.
struct Script {
    var ops: [Op]

    /// Whether op `index`, a timer with a leeway, is alone in its scheduler but for saturated
    /// timers, which are never armed: its leeway then has nothing to coalesce with, and it must
    /// wake its scheduler at its deadline, as a zero-leeway timer does.
    func isLone(_ index: Int) -> Bool {
        ops.indices.allSatisfy { $0 == index || !ops[$0].isTimerCompany }
    }

    /// The leeway the rules allow op `index`: none for a lone timer.
    func allowedLeeway(_ index: Int) -> Duration {
        isLone(index) ? .zero : ops[index].leeway
    }

    /// How many times op `index` runs within the script, when the contract fixes it: far timers
    /// never (they stay pending until the driver disposes them at the end), a timer with a huge
    /// leeway that is not lone may wait for another wake-up far away (unknown), a periodic timer
    /// with a far interval ticks once within the script. A disposal racing the start on another
    /// thread may go either way (unknown).
    func expectedRuns(_ index: Int) -> Int? {
        let op = ops[index]
        if op.isFar { return 0 }
        if op.leeway.isHugeLeeway && !isLone(index) { return nil }
        switch op {
        case .task, .timer, .wallTimer: return 1
        case .periodic(_, let interval, _, let ticks, _): return interval.isFar ? min(ticks, 1) : ticks
        case .timerDisposedAtOnce: return 0
        case .timerDisposedByOtherThread: return nil
        case .nested(let children): return 1 + children
        case .recursive(let runs): return runs
        case .actorCalls(let calls): return calls
        case .sleep: return 1
        case .sleepCancelledByOtherThread, .pause: return nil
        }
    }

    /// Whether the driver keeps op `index`'s disposable and disposes it at the end of the script:
    /// a timer that may still be pending then (far, or waiting on a huge leeway, or a periodic timer
    /// with a far interval that has not disposed itself).
    func disposedAtEnd(_ index: Int) -> Bool {
        switch ops[index] {
        case .timer(let delay, let leeway): delay.isFar || leeway.isHugeLeeway
        case .wallTimer: ops[index].isFar
        case .periodic(let delay, let interval, let leeway, let ticks, _):
            delay.isFar || leeway.isHugeLeeway || (interval.isFar && ticks > 1)
        default: false
        }
    }

    /// The longest any op needs before it is done, from the op's call: what the driver waits for,
    /// and on virtual time advances past (far delays, a disposed far timer's too, and huge
    /// leeways count for nothing: they are not waited for).
    var horizon: Duration {
        ops.indices.map { index -> Duration in
            let op = ops[index]
            guard !op.isFar else { return .zero }
            if case .timerDisposedAtOnce(let delay) = op, delay.isFar { return .zero }
            let leeway = op.leeway.isHugeLeeway ? .zero : op.leeway
            switch op {
            case .timer(let delay, _), .timerDisposedAtOnce(let delay), .sleep(let delay):
                return max(.zero, delay) + leeway
            case .wallTimer(.offset(let offset)): return max(.zero, offset)
            case .periodic(let delay, let interval, _, let ticks, let stall):
                let grid = interval.isFar ? .zero : interval * (ticks + 1 + stall)
                return max(.zero, delay) + grid + leeway * ticks
            case .timerDisposedByOtherThread(let delay, let after), .sleepCancelledByOtherThread(let delay, let after):
                return max(max(.zero, delay), after)
            default: return .zero
            }
        }.max() ?? .zero
    }

    var description: String {
        ops.enumerated().map { "  #\($0.offset): \($0.element.description)" }.joined(separator: "\n")
    }
}

extension Duration {
    /// Far enough that no script reaches it: a timer this far out must stay pending.
    var isFar: Bool { self >= .seconds(60) }

    /// A leeway beyond what a script waits for: a timer with it may legitimately wait for a wake-up
    /// far away (unless it is lone).
    var isHugeLeeway: Bool { self >= .seconds(1) }

    /// Saturates the schedulers' nanosecond conversion, so the deadline is `Nanoseconds.never`
    /// from any clock reading: never armed, pending until disposed.
    var isSaturated: Bool { Nanoseconds.of(self) == Int64.max }

    /// In nanoseconds, saturating (negative delays stay negative).
    var nanoseconds: Int64 { Nanoseconds.of(self) }

    /// Short text in the unit that shows the value exactly.
    var text: String {
        let attoseconds = self.attoseconds
        let units: [(Int128, String)] = [
            (1_000_000_000_000_000_000 * 3600, "h"), (1_000_000_000_000_000_000, "s"),
            (1_000_000_000_000_000, "ms"), (1_000_000_000_000, "µs"), (1_000_000_000, "ns"),
        ]
        let saturated = isSaturated ? " (saturates)" : ""
        guard attoseconds != 0 else { return "0" }
        for (size, name) in units where attoseconds % size == 0 {
            let count = attoseconds / size
            if name == "s" && (count == Int128(Int64.max) || count == -Int128(Int64.max)) {
                return "\(count < 0 ? "-" : "").seconds(Int64.max)\(saturated)"
            }
            return "\(count) \(name)\(saturated)"
        }
        return "\(attoseconds) as\(saturated)"
    }
}
#endif
