import Scheduling
import Testing

/// A timer for the wake-up rule alone: a deadline and a leeway, no scheduler, no clock.
private final class Timer: CoalescingTimer {
    let deadline: Int64
    let leeway: Int64
    var heapIndex = -1
    init(_ deadline: Int64, leeway: Int64 = 0) {
        self.deadline = deadline
        self.leeway = leeway
    }
}

/// A timer's own bound: its deadline plus its own leeway, saturating.
private func bound(_ timer: Timer) -> Int64 {
    let (sum, overflow) = timer.deadline.addingReportingOverflow(max(0, timer.leeway))
    return overflow ? .max : sum
}

private func heap(_ timers: [Timer]) -> IndexedHeap<Timer> {
    var heap = IndexedHeap<Timer>()
    for (sequence, timer) in timers.enumerated() { heap.insert(timer, sequence: UInt64(sequence)) }
    return heap
}

/// The wake-up rule (TimerWake): a wake-up moves later only to share another timer's deadline
/// within every waiting timer's own bound, never onto `never`, and an armed wake-up serves only if
/// it is no later than that.
@Suite("The wake-up rule")
struct TimerWakeTests {
    @Test("A leeway'd timer b and a zero-leeway timer x due within b's leeway: no arming after x's deadline serves")
    func zeroLeewayTimerBoundsTheWake() {
        let leeway: Int64 = 7_200
        for due in [1, 2, 17, 3_599, 3_600, leeway - 1, leeway] as [Int64] {
            let wake = heap([Timer(0, leeway: leeway), Timer(due)]).wake!
            // Sharing x's deadline is within both bounds: one wake-up, at x's deadline.
            #expect(wake.target == due)
            for armed in [due + 1, due + 2, (due + leeway) / 2 + 1, leeway - 1, leeway] where armed > due {
                #expect(!wake.isServed(byArmed: armed), "armed at \(armed), x due at \(due): x would be late")
            }
            #expect(wake.isServed(byArmed: due))
            #expect(wake.isServed(byArmed: 0), "an earlier arming fires, runs nothing due, and re-arms")
        }
    }

    @Test("A saturated deadline is no wake-up to share: the leeway'd timer wakes at its own deadline")
    func neverIsNoTarget() {
        for leeway in [1, 7_200, Int64.max / 2, Int64.max] as [Int64] {
            let wake = heap([Timer(5, leeway: leeway), Timer(.max)]).wake!
            #expect(wake.target == 5)
            #expect(!wake.isServed(byArmed: 6))
            #expect(!wake.isServed(byArmed: .max))
        }
        #expect(heap([Timer(.max, leeway: 10)]).wake == nil)
        #expect(heap([Timer(.max), Timer(.max)]).wake == nil)
    }

    @Test("A timer alone wakes at its deadline, whatever its leeway")
    func loneTimer() {
        for leeway in [0, 1, 7_200, Int64.max] as [Int64] {
            let wake = heap([Timer(42, leeway: leeway)]).wake!
            #expect(wake.target == 42)
            #expect(!wake.isServed(byArmed: 43), "an arming later than a lone timer's deadline is a postponement")
        }
    }

    @Test("A second deadline beyond the first timer's bound does not move the wake-up")
    func secondBeyondBound() {
        let wake = heap([Timer(0, leeway: 10), Timer(11)]).wake!
        #expect(wake.target == 0)
        #expect(!wake.isServed(byArmed: 5))
    }

    /// Seeded random heaps against a brute-force reference: the earliest of all timers' own bounds,
    /// and the deadlines a wake-up may share.
    @Test("The planned wake-up keeps every timer's own bound (seeded random model)", arguments: 1...4 as ClosedRange<UInt64>)
    func model(seed: UInt64) {
        var random = SplitMix(seed: seed)
        func draw(_ range: ClosedRange<Int64>) -> Int64 { Int64.random(in: range, using: &random) }
        let leeways: [ClosedRange<Int64>] = [0...0, 1...20, 1_000...1_000_000, (Int64.max / 2)...(Int64.max)]
        for _ in 0..<5_000 {
            let count = Int(draw(1...7))
            let timers: [Timer] = (0..<count).map { _ in
                let deadline = draw(0...9) == 0 ? Int64.max : draw(0...60)
                return Timer(deadline, leeway: draw(leeways[Int(draw(0...3))]))
            }
            let wake = heap(timers).wake
            let finite = timers.filter { $0.deadline != .max }
            guard let earliest = finite.map(\.deadline).min() else {
                #expect(wake == nil, "only saturated deadlines: nothing to arm")
                continue
            }
            guard let wake else {
                Issue.record("no wake-up for a heap with a finite deadline: \(describe(timers))")
                continue
            }
            let latestAllowed = finite.map(bound).min()!
            // Never onto `never`, never before the first deadline, never past any timer's own bound.
            #expect(wake.target != .max)
            #expect(wake.target >= earliest, "\(describe(timers)) → \(wake.target)")
            #expect(wake.target <= latestAllowed, "\(describe(timers)) → \(wake.target) past a bound \(latestAllowed)")
            // It shares a real timer's deadline: nothing wakes for no timer.
            #expect(finite.contains { $0.deadline == wake.target })
            // A lone timer, or one with no leeway first, wakes at its deadline.
            let first = timers.enumerated().min { ($0.element.deadline, $0.offset) < ($1.element.deadline, $1.offset) }!
            if finite.count == 1 || first.element.leeway == 0 { #expect(wake.target == earliest) }
            // Coalescing happens where every bound allows it: with the next deadline, when it is
            // within the first timer's bound (and so within every other's).
            let others = timers.enumerated().filter { $0.offset != first.offset }.map(\.element.deadline)
            if first.element.leeway > 0, let next = others.min(), next != .max, next <= bound(first.element) {
                #expect(wake.target == next, "\(describe(timers)) could share \(next), woke at \(wake.target)")
            }
            // An armed wake-up serves exactly when it is no later than the target; serving never
            // lets a timer pass its own bound.
            for armed in [wake.target - 1, wake.target, wake.target + 1, latestAllowed, draw(0...80)] {
                #expect(wake.isServed(byArmed: armed) == (armed <= wake.target))
                if wake.isServed(byArmed: armed) { #expect(armed <= latestAllowed) }
            }
        }
    }

    @Test("With a wheel in front: the wake-up keeps every timer's own bound, heap and wheel (seeded random model)")
    func wheeledModel() {
        var random = SplitMix(seed: 26)
        func draw(_ range: ClosedRange<Int64>) -> Int64 { Int64.random(in: range, using: &random) }
        let tick: Int64 = 1 << 20
        for _ in 0..<2_000 {
            var store = WheeledHeap<Timer>(tickShift: 20, shrinksOnRemoval: true)
            let now = draw(0...(4 * tick))
            store.advance(monotonicNow: now)
            let timers: [Timer] = (0..<Int(draw(1...6))).map { _ in
                let deadline = draw(0...12) == 0 ? Int64.max : now + draw(-tick...(3_000 * tick))
                let leeway = [0, draw(1...tick), draw(1...(1_000 * tick)), Int64.max][Int(draw(0...3))]
                return Timer(deadline, leeway: leeway)
            }
            for (sequence, timer) in timers.enumerated() { store.insert(timer, sequence: UInt64(sequence)) }
            store.advance(monotonicNow: now, beforeSleeping: true)
            let finite = timers.filter { $0.deadline != .max }
            guard let wake = store.wake else {
                #expect(finite.isEmpty, "a finite deadline and no wake-up: \(describe(timers))")
                continue
            }
            #expect(wake.target != .max)
            if let latestAllowed = finite.map(bound).min() {
                #expect(wake.target <= latestAllowed, "\(describe(timers)) → \(wake.target), bound \(latestAllowed)")
                for armed in [wake.target, wake.target + 1, latestAllowed] where wake.isServed(byArmed: armed) {
                    #expect(armed <= latestAllowed)
                }
            }
            _ = store.removeAll()
        }
    }
}

private func describe(_ timers: [Timer]) -> String {
    timers.map { "(\($0.deadline == .max ? "never" : String($0.deadline)), leeway \($0.leeway))" }.joined(separator: " ")
}
