#if CommandLineTool
import Scheduling

/// The random draws of cross-check scripts: the same seed always gives the same script.
struct ScriptGenerator {
    private var generator: SplitMix

    init(seed: UInt64) {
        generator = SplitMix(seed: seed)
    }

    private mutating func draw(_ range: ClosedRange<Int>) -> Int { Int.random(in: range, using: &generator) }
    private mutating func micros(_ range: ClosedRange<Int>) -> Duration { .microseconds(draw(range)) }
    /// True with probability 1/`n`.
    private mutating func oneIn(_ n: Int) -> Bool { draw(1...n) == 1 }

    /// A script. Three in five: 4–12 random ops, half of them with a coalescing cluster among
    /// them. Two in five: a coalescing cluster, then quiet ops (``quietOp()``).
    mutating func script() -> Script {
        if draw(1...5) <= 2 {
            return Script(ops: coalescingCluster() + (0..<draw(0...6)).map { _ in quietOp() })
        }
        var ops = (0..<draw(4...12)).map { _ in op() }
        if oneIn(2) { ops.insert(contentsOf: coalescingCluster(), at: draw(0...ops.count)) }
        return Script(ops: ops)
    }

    /// The shape that loses a timer when a wake-up planner forgets a timer's own bound: a timer with
    /// a huge leeway due soon and a far one (the leeway mostly reaches the far deadline), a pause
    /// that makes the first due, then a timer due at once (or soon), which must still run on time.
    /// Mostly the far one first, so that the first wake-up planned for the leeway'd one coalesces
    /// already. The other order reaches the planner only when a periodic timer's tick goes back
    /// into the heap, which depends on timing: a driver preempted between the two lets the
    /// periodic timer tick, and tiny intervals end all its ticks, before the far timer comes.
    private mutating func coalescingCluster() -> [Op] {
        let far: Op = .timer(delay: clusterFarDelay(), leeway: .zero)
        // A one-shot leeway exists only for handler timers, which only LoopScheduler coalesces.
        let leewayed: Op =
            oneIn(4)
            ? .timer(delay: micros(0...2_000), leeway: hugeLeeway())
            : .periodic(
                delay: micros(0...2_000),
                interval: interval(),
                leeway: hugeLeeway(),
                ticks: draw(1...4),
                stallIntervals: 0
            )
        var ops = oneIn(6) ? [leewayed, far] : [far, leewayed]
        ops.append(.pause(micros(2_500...6_000)))
        let delay: Duration =
            switch draw(0...3) {
            case 0, 1: .zero
            case 2: micros(-5_000...(-1))
            default: micros(1...1_000)
            }
        ops.append(.timer(delay: delay, leeway: .zero))
        return ops
    }

    /// An hour (in the timing wheel), ten years (beyond it, in the heap), or saturating.
    private mutating func clusterFarDelay() -> Duration {
        switch draw(0...9) {
        case 0, 1, 2: .seconds(3_600)
        case 3, 4, 5: .seconds(10 * 365 * 86_400)
        case 6, 7: .seconds(Int64.max)
        default: .nanoseconds(Int64.max)
        }
    }

    /// One op, weighted towards timers and pauses.
    private mutating func op() -> Op {
        switch draw(0...24) {
        case 0, 1: .task
        case 2...6: .timer(delay: delay(), leeway: leeway())
        case 7: .wallTimer(wallDate())
        case 8...10: periodic()
        case 11: .timerDisposedAtOnce(delay: oneIn(3) ? farDelay() : micros(20_000...40_000))
        case 12: .timerDisposedByOtherThread(delay: micros(0...20_000), after: micros(0...20_000))
        case 13: .nested(children: draw(1...5))
        case 14: .actorCalls(calls: draw(1...8))
        case 15: .sleep(delay: oneIn(5) ? micros(-5_000...(-1)) : micros(0...20_000))
        case 16: .sleepCancelledByOtherThread(delay: micros(0...20_000), after: micros(0...20_000))
        case 17, 18: .recursive(runs: draw(1...20))
        default: .pause(micros(0...6_000))
        }
    }

    /// An op that puts no timer in the scheduler that its wake-up planning would look at before
    /// it is due: one that runs at once (a task, nesting, recursion, actor calls, a timer due now
    /// or in the past), one that never comes (saturated), or a pause. A timer due soon would
    /// re-plan the wake-up when scheduled or when it fires, which would hide a lost wake-up
    /// within the lateness allowed.
    private mutating func quietOp() -> Op {
        switch draw(0...9) {
        case 0: .task
        case 1: .nested(children: draw(1...5))
        case 2: .recursive(runs: draw(1...20))
        case 3: .actorCalls(calls: draw(1...8))
        case 4, 5: .timer(delay: oneIn(2) ? .zero : micros(-5_000...(-1)), leeway: .zero)
        case 6: .timer(delay: .seconds(Int64.max), leeway: oneIn(2) ? .zero : hugeLeeway())
        default: .pause(micros(0...6_000))
        }
    }

    /// A periodic timer: usually first due after one interval, sometimes after any delay.
    private mutating func periodic() -> Op {
        let interval = interval()
        return .periodic(
            delay: oneIn(6) ? delay() : interval.isFar ? micros(0...8_000) : interval,
            interval: interval,
            leeway: leeway(),
            ticks: draw(1...6),
            // A stall of a far interval would busy the scheduler for hours.
            stallIntervals: interval.isFar ? 0 : draw(0...3)
        )
    }

    /// A one-shot delay: mostly within 30 ms, sometimes negative, sometimes far.
    private mutating func delay() -> Duration {
        switch draw(0...9) {
        case 0: negativeDelay()
        case 1: farDelay()
        default: micros(0...30_000)
        }
    }

    /// A negative delay: as soon as possible, however negative.
    private mutating func negativeDelay() -> Duration {
        switch draw(0...5) {
        case 0: .seconds(-Int64.max)
        case 1: .seconds(-3_600)
        default: micros(-5_000...(-1))
        }
    }

    /// Hours (in the timing wheel), ten years (beyond it, in the heap), or saturating.
    private mutating func farDelay() -> Duration {
        switch draw(0...9) {
        case 0, 1: .seconds(3_600 * draw(1...2))
        case 2, 3, 4: .seconds(10 * 365 * 86_400)
        case 5, 6: .seconds(Int64.max)
        case 7: .seconds(Int64.max) * 18
        default: .nanoseconds(Int64.max)
        }
    }

    /// Zero, small, or huge.
    private mutating func leeway() -> Duration {
        switch draw(0...9) {
        case 0...4: .zero
        case 5, 6, 7: micros(1...20_000)
        default: hugeLeeway()
        }
    }

    /// Two hours, twenty years, or saturating.
    private mutating func hugeLeeway() -> Duration {
        switch draw(0...9) {
        case 0, 1: .seconds(7_200)
        case 2, 3, 4: .seconds(20 * 365 * 86_400)
        case 5, 6, 7: .seconds(Int64.max)
        default: .nanoseconds(Int64.max)
        }
    }

    /// A period: tiny (1 ns, 1 µs, 50 µs), usual (0.3–8 ms), or far (hours, saturating).
    private mutating func interval() -> Duration {
        switch draw(0...9) {
        case 0: .nanoseconds(1)
        case 1: .microseconds(1)
        case 2: .microseconds(50)
        case 3: oneIn(2) ? .seconds(3_600) : .seconds(Int64.max)
        default: micros(300...8_000)
        }
    }

    private mutating func wallDate() -> Op.WallDate {
        switch draw(0...9) {
        case 0: .distantFuture
        case 1: .distantPast
        case 2: .offset(.seconds(3_600))
        default: .offset(micros(-5_000...30_000))
        }
    }
}

extension Script {
    /// A random script drawn from `seed`; the same seed always gives the same script.
    static func generate(seed: UInt64) -> Script {
        var generator = ScriptGenerator(seed: seed)
        return generator.script()
    }
}
#endif
