import Scheduling
import Testing

/// A timer for the store alone: a deadline the store may move, a leeway, no scheduler.
final class ModelTimer: RearmableEntry, CoalescingTimer {
    var deadline: Int64
    let leeway: Int64
    var heapIndex = -1
    init(_ deadline: Int64, leeway: Int64) {
        self.deadline = deadline
        self.leeway = leeway
    }
}

/// The store both schedulers use (a timing wheel in front of a heap, `WheeledHeap`) against a
/// plain reference model, on seeded random scripts: schedule, cancel, re-arm (later: lazily, in
/// place; earlier: moved at once), move time forward, plan the wake-up, pop what is due. After
/// every step: the wheel's and the heap's invariants hold, the counts agree; each timer fires once
/// or never, never early, never after it was cancelled, never missed once due, in
/// `(deadline, first-scheduling sequence)` order; the planned wake-up is no later than any pending
/// timer's own bound (deadline plus its leeway).
@Suite("WheeledHeap against a model")
struct WheeledHeapModelTests {
    /// The two configurations the schedulers run: the loop's (heaps shrunk by their owner, big
    /// buckets moved in chunks: a small budget makes chunks common), and the Dispatch timer
    /// queue's; each at the real tick (2^20 ns) and at a tiny one, which reaches every level with
    /// small numbers.
    struct Configuration: Sendable, CustomTestStringConvertible {
        let name: String
        let tickShift: Int
        let shrinksOnRemoval: Bool
        let cascadeBudget: Int
        var testDescription: String { "\(name), tick 2^\(tickShift) ns" }
    }

    static let configurations: [Configuration] = [
        Configuration(name: "loop", tickShift: 20, shrinksOnRemoval: false, cascadeBudget: 3),
        Configuration(name: "loop", tickShift: 2, shrinksOnRemoval: false, cascadeBudget: 3),
        Configuration(name: "queue", tickShift: 20, shrinksOnRemoval: true, cascadeBudget: .max),
        Configuration(name: "queue", tickShift: 2, shrinksOnRemoval: true, cascadeBudget: .max),
    ]

    struct Pending {
        let timer: ModelTimer
        var deadline: Int64
        let sequence: UInt64
    }

    struct Script: ~Copyable {
        var random: SplitMix
        let tickShift: Int
        var store: WheeledHeap<ModelTimer>
        var now: Int64
        var sequence: UInt64 = 0
        var pending: [ObjectIdentifier: Pending] = [:]
        var gone: [ModelTimer] = []
        var fired = 0
        var lazyRearms = 0

        init(seed: UInt64, _ configuration: Configuration) {
            random = SplitMix(seed: seed)
            tickShift = configuration.tickShift
            store = WheeledHeap(
                tickShift: configuration.tickShift,
                shrinksOnRemoval: configuration.shrinksOnRemoval,
                cascadeBudget: configuration.cascadeBudget
            )
            now = Int64(1) << (configuration.tickShift + 3)
            store.advance(monotonicNow: now)
        }

        mutating func number(below bound: UInt64) -> UInt64 { bound == 0 ? 0 : random.next() % bound }

        /// A delay at a random scale (ticks to beyond the wheel), on a level edge, or extreme.
        mutating func delay() -> Int64 {
            switch number(below: 12) {
            case 0:
                let width = Int64(1) << min(62, tickShift + 6 * Int(number(below: 7)))
                return width + Int64(number(below: 3)) - 1
            case 1: return [Int64.max, Int64.max / 2, -1, 0, Int64.min][Int(number(below: 5))]
            default: return Int64(number(below: 1 << number(below: UInt64(min(62, tickShift + 30)))))
            }
        }

        mutating func leeway() -> Int64 {
            [0, 0, 0, 1, Int64(number(below: 1 << UInt64(tickShift + 4))), .max][Int(number(below: 6))]
        }

        mutating func schedule() {
            let deadline = Nanoseconds.adding(now, delay())
            let timer = ModelTimer(deadline, leeway: leeway())
            store.insert(timer, sequence: sequence)
            pending[ObjectIdentifier(timer)] = Pending(timer: timer, deadline: deadline, sequence: sequence)
            sequence += 1
        }

        mutating func pick() -> Pending? {
            guard !pending.isEmpty else { return nil }
            let index = pending.index(pending.startIndex, offsetBy: Int(number(below: UInt64(pending.count))))
            return pending[index].value
        }

        mutating func cancel() {
            guard let victim = pick() else { return }
            pending[ObjectIdentifier(victim.timer)] = nil
            let removed = store.remove(victim.timer)
            #expect(removed, "a pending timer was not in the store")
            gone.append(victim.timer)
        }

        /// Pushes a timer back (most re-arms: an idle timeout) or brings it forward.
        mutating func rearm() {
            guard let target = pick() else {
                if let old = gone.randomElement(using: &random) {
                    let rearmed = store.rearm(old, to: now)
                    #expect(!rearmed, "a timer that fired or was cancelled was re-armed")
                }
                return
            }
            let later = number(below: 4) != 0
            let deadline =
                later
                ? Nanoseconds.adding(target.deadline, Int64(number(below: 1 << UInt64(tickShift + 14))))
                : Nanoseconds.adding(now, delay())
            if target.timer.heapIndex <= -2 && deadline >= target.timer.deadline { lazyRearms += 1 }
            let rearmed = store.rearm(target.timer, to: deadline)
            #expect(rearmed, "a pending timer could not be re-armed")
            pending[ObjectIdentifier(target.timer)]!.deadline = deadline
        }

        /// Moves time forward, as a scheduler does before it fires, and fires everything due.
        mutating func advanceAndFire() {
            let step = Int64(number(below: 1 << number(below: UInt64(min(62, tickShift + 14)))))
            now = Nanoseconds.adding(now, step)
            let continuesCascade = number(below: 2) == 0
            store.advance(monotonicNow: now, continuesCascade: continuesCascade, beforeSleeping: number(below: 3) == 0)
            var previous: (Int64, UInt64)?
            while let key = store.heap.firstKey, key.deadline <= now {
                let timer = store.heap.removeFirst()!
                guard let expected = pending.removeValue(forKey: ObjectIdentifier(timer)) else {
                    Issue.record("a timer fired that was cancelled or had fired")
                    continue
                }
                #expect(timer.deadline == expected.deadline, "fired at a deadline it no longer had")
                #expect(timer.deadline <= now, "fired early")
                #expect(key.sequence == expected.sequence, "fired with another sequence than its first one")
                if let previous { #expect(previous <= (key.deadline, key.sequence), "fired out of order") }
                previous = (key.deadline, key.sequence)
                gone.append(timer)
                fired += 1
            }
            for missed in pending.values where missed.deadline <= now {
                Issue.record("a timer due at \(missed.deadline) was not fired at \(now)")
            }
        }

        func checkWake() {
            let bounds = pending.values.compactMap { item -> Int64? in
                guard item.deadline != .max else { return nil }
                let (sum, overflow) = item.deadline.addingReportingOverflow(item.timer.leeway)
                return overflow ? .max : sum
            }
            guard let tightest = bounds.min() else { return }
            let planned = store.wake
            guard let wake = planned else {
                Issue.record("no wake-up with a timer pending")
                return
            }
            #expect(wake.target <= tightest, "the store would sleep past a pending timer's bound")
        }

        mutating func step() {
            switch number(below: 10) {
            case 0, 1, 2: schedule()
            case 3: cancel()
            case 4, 5, 6: rearm()
            default: advanceAndFire()
            }
            checkWake()
            let violations = store.invariantViolations()
            #expect(violations.isEmpty, "\(violations.prefix(3))")
            let held = store.count
            #expect(held == pending.count, "store holds \(held), model \(pending.count)")
        }
    }

    @Test("Seeded scripts with re-arms keep every invariant after every step", arguments: configurations)
    func scripts(configuration: Configuration) {
        var lazyRearms = 0
        var fired = 0
        for seed in 1...12 as ClosedRange<UInt64> {
            var script = Script(seed: seed, configuration)
            for _ in 0..<1_500 { script.step() }
            // Drain: everything still pending fires at its deadline, in order.
            script.now = Int64.max - 1
            script.advanceAndFire()
            lazyRearms += script.lazyRearms
            fired += script.fired
            _ = script.store.removeAll()
        }
        #expect(lazyRearms > 100, "the scripts pushed back only \(lazyRearms) timers in the wheel")
        #expect(fired > 1_000)
    }

    @Test("A timer pushed back in the wheel moves once, when its first bucket comes due, and fires at its last deadline")
    func lazyRearmMovesOnce() {
        var store = WheeledHeap<ModelTimer>(tickShift: 20, shrinksOnRemoval: false)
        let second: Int64 = 1_000_000_000
        store.advance(monotonicNow: 0)
        let timer = ModelTimer(30 * second, leeway: 0)
        store.insert(timer, sequence: 0)
        let slot = timer.heapIndex
        #expect(slot <= -2, "a 30 s timer waits in the wheel")
        var rearmed = 0
        for push in 1...1_000 where store.rearm(timer, to: 30 * second + Int64(push) * 1_000_000) { rearmed += 1 }
        #expect(rearmed == 1_000)
        #expect(timer.heapIndex == slot, "a later deadline moved the timer")
        let violations = store.invariantViolations()
        #expect(violations.isEmpty)
        // Its first bucket comes due: it is filed again by the deadline it has now.
        store.advance(monotonicNow: 30 * second)
        let early = store.heap.firstKey?.deadline
        #expect(early == nil, "it reached the heap at its old deadline")
        store.advance(monotonicNow: 31 * second)
        let due = store.heap.firstKey?.deadline
        #expect(due == 31 * second)
        let after = store.invariantViolations()
        #expect(after.isEmpty)
        _ = store.removeAll()
    }
}
