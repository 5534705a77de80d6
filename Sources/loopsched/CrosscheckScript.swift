#if CommandLineTool
import Scheduling

/// One step of a cross-check script. Ids are the op's index in the script.
enum Op: Equatable {
    /// `schedule { }` from the driver thread.
    case task
    /// `schedule(after:)` from the driver thread.
    case timer(delayMicros: Int)
    /// `schedule(at: now + offset)` from the driver thread.
    case wallTimer(offsetMicros: Int)
    /// A periodic timer that disposes itself from inside its tick number `ticks`; its first tick
    /// busies the scheduler for `stallIntervals` intervals, so later grid points must be skipped.
    case periodic(intervalMicros: Int, ticks: Int, stallIntervals: Int)
    /// A timer disposed by the driver right after scheduling it: it must never start.
    case timerDisposedAtOnce(delayMicros: Int)
    /// A timer that another thread disposes after `afterMicros`: it must not start after that.
    case timerDisposedByOtherThread(delayMicros: Int, afterMicros: Int)
    /// A task that schedules `children` tasks on its own scheduler from inside its action.
    case nested(children: Int)
    /// `scheduleRecursive` running `runs` times.
    case recursive(runs: Int)
    /// A task awaiting `calls` calls to an actor pinned to the scheduler (from the global pool;
    /// on the test scheduler, from a task that prefers it): each call is one run, on the scheduler.
    case actorCalls(calls: Int)
    /// A task that awaits `sleep(for:)` on the scheduler, then records one run (in the task).
    case sleep(delayMicros: Int)
    /// A sleeping task that another thread cancels after `afterMicros`: if the sleep returns
    /// normally it must not be early; cancelled, it throws.
    case sleepCancelledByOtherThread(delayMicros: Int, afterMicros: Int)

    /// Whether the outcome (how many times it ran) is fixed by the contract, so every scheduler
    /// must agree on it. A disposal racing the start on another thread may go either way.
    var expectedRuns: Int? {
        switch self {
        case .task, .timer, .wallTimer: 1
        case .periodic(_, let ticks, _): ticks
        case .timerDisposedAtOnce: 0
        case .timerDisposedByOtherThread: nil
        case .nested(let children): 1 + children
        case .recursive(let runs): runs
        case .actorCalls(let calls): calls
        case .sleep: 1
        case .sleepCancelledByOtherThread: nil
        }
    }

    var description: String {
        switch self {
        case .task: "task"
        case .timer(let delay): "timer after \(delay) µs"
        case .wallTimer(let offset): "wall-clock timer at now + \(offset) µs"
        case .periodic(let interval, let ticks, let stall):
            "periodic every \(interval) µs, first tick stalling \(stall) intervals, disposed from inside tick \(ticks)"
        case .timerDisposedAtOnce(let delay): "timer after \(delay) µs, disposed at once"
        case .timerDisposedByOtherThread(let delay, let after):
            "timer after \(delay) µs, disposed by another thread after \(after) µs"
        case .nested(let children): "task scheduling \(children) tasks from inside"
        case .recursive(let runs): "recursive, \(runs) runs"
        case .actorCalls(let calls): "\(calls) calls to an actor pinned to the scheduler"
        case .sleep(let delay): "a task sleeping \(delay) µs"
        case .sleepCancelledByOtherThread(let delay, let after):
            "a task sleeping \(delay) µs, cancelled by another thread after \(after) µs"
        }
    }
}

/// A cross-check script: ops the driver thread issues in order.
struct Script {
    var ops: [Op]

    /// A random script drawn from `seed`; the same seed always gives the same script.
    static func generate(seed: UInt64) -> Script {
        var generator = SplitMix(seed: seed)
        func draw(_ range: ClosedRange<Int>) -> Int { Int.random(in: range, using: &generator) }
        let count = draw(4...14)
        let ops: [Op] = (0..<count).map { _ in
            switch draw(0...12) {
            case 0, 1: .task
            case 2, 3: .timer(delayMicros: draw(0...30_000))
            case 4: .wallTimer(offsetMicros: draw(-5_000...30_000))
            case 5: .periodic(intervalMicros: draw(300...8_000), ticks: draw(1...6), stallIntervals: draw(0...3))
            case 6: .timerDisposedAtOnce(delayMicros: draw(20_000...40_000))
            case 7: .timerDisposedByOtherThread(delayMicros: draw(0...20_000), afterMicros: draw(0...20_000))
            case 8: .nested(children: draw(1...5))
            case 9: .actorCalls(calls: draw(1...8))
            case 10: .sleep(delayMicros: draw(0...20_000))
            case 11: .sleepCancelledByOtherThread(delayMicros: draw(0...20_000), afterMicros: draw(0...20_000))
            default: .recursive(runs: draw(1...20))
            }
        }
        return Script(ops: ops)
    }

    /// The longest any op needs before it is done, in microseconds.
    var horizonMicros: Int {
        ops.map { op in
            switch op {
            case .timer(let delay), .timerDisposedAtOnce(let delay): delay
            case .wallTimer(let offset): max(0, offset)
            case .periodic(let interval, let ticks, let stall): interval * (ticks + 1 + stall)
            case .timerDisposedByOtherThread(let delay, let after), .sleepCancelledByOtherThread(let delay, let after):
                max(delay, after)
            case .sleep(let delay): delay
            default: 0
            }
        }.max() ?? 0
    }

    var description: String {
        ops.enumerated().map { "  #\($0.offset): \($0.element.description)" }.joined(separator: "\n")
    }
}
#endif
