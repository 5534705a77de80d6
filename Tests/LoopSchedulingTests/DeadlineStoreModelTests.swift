import Scheduling
import Testing

@testable import LoopEngine
@testable import LoopScheduling

/// The timer store (wheel + heaps) against a plain reference model, on seeded random scripts that
/// drive it as the loop does, through its mutating API only: schedule, cancel, advance time, ask
/// for the wake-up, pop what is due, re-arm periodic timers, step the wall clock, and re-arm
/// one-shot timers as rule 13 does (`TimerDriver`'s step 4): on the loop thread through the store;
/// from another thread by writing the deadline in place, a later one left for the store to find
/// (a bucket's move, or a pop that finds the timer not due and files it again with its sequence),
/// an earlier one queued and filed again (`reposition`) when the loop next takes its queue.
///
/// Every script checks, at every step: each timer fires exactly once or never, never early, never
/// after it was cancelled, at the deadline it has then, in `(deadline, sequence)` order with every
/// other due timer of its clock; the store never sleeps past a pending deadline; its count is the
/// model's; and, sampled (``Script/checksInvariants(at:)``), the store's invariants hold, a timer
/// whose earlier deadline is still queued judged by the deadline it was filed by.
@Suite("Loop timer store against a model")
struct DeadlineStoreModelTests {
    struct Pending {
        let timer: LoopTimer
        var deadline: Int64
        var sequence: UInt64
        let wall: Bool
        /// A later deadline was written from another thread while the timer waited in a heap: its
        /// key there is the old deadline until the store files it again. The loop pops it in the
        /// key's order, which the order check leaves out (see the note on issue 36).
        var staleKey = false
    }

    /// One script: the store and the model side by side.
    struct Script: ~Copyable {
        /// Seeded, so a failing script replays.
        var random: SplitMix
        let seed: UInt64
        let tickShift: Int
        var store: DeadlineStore
        var now: Int64
        var wallNow: Int64
        var pending: [ObjectIdentifier: Pending] = [:]
        var gone: [LoopTimer] = []
        var fired = 0
        /// Steps after which a big bucket was moving down in chunks.
        var cascadingSteps = 0
        /// Timers re-armed earlier from another thread, queued to the loop (`LoopItem.rearmed`),
        /// in order: the loop files them again when it takes its queue, before it fires or arms.
        var queuedRearms: [LoopTimer] = []
        /// Re-arms made, by kind, and pops that found a timer not due (pushed back from another
        /// thread) and filed it again: the scripts must reach every path.
        var rearms = (onLoop: 0, laterElsewhere: 0, earlierElsewhere: 0, refiled: 0)
        /// Steps after which the store's invariants were checked.
        var checkedSteps = 0

        init(seed: UInt64, tickShift: Int, start: Int64, cascadeBudget: Int = DeadlineStore.cascadeBudget) {
            self.seed = seed
            random = SplitMix(seed: seed)
            self.tickShift = tickShift
            store = DeadlineStore(tickShift: tickShift, cascadeBudget: cascadeBudget)
            now = start
            wallNow = 1_700_000_000_000_000_000
        }

        mutating func number(below bound: UInt64) -> UInt64 { bound == 0 ? 0 : random.next() % bound }

        /// A delay at a random scale, or one that lands on (or next to) a wheel boundary, an
        /// extreme, or the past.
        mutating func delay() -> Int64 {
            switch number(below: 10) {
            case 0:
                // Exactly at, or one before or after, a level edge of the wheel, aligned to it.
                let level = Int(number(below: 7))
                let width = Int64(1) << min(62, tickShift + 6 * level)
                let aligned = (now / width &+ Int64(number(below: 3))).multipliedReportingOverflow(by: width)
                let target = Nanoseconds.adding(aligned.overflow ? Int64.max : aligned.partialValue, Int64(number(below: 3)) - 1)
                return Nanoseconds.subtracting(target, now)
            case 1:
                return [Int64.max, Int64.max - 1, Int64.max / 2, Int64.min, -1, 0][Int(number(below: 6))]
            case 2:
                return -Int64(number(below: 1 << 20))
            default:
                let scale = number(below: UInt64(min(62, tickShift + 38)))
                return Int64(number(below: 1 << scale))
            }
        }

        /// Several timers within one far wheel bucket (level 1 or 2), so that buckets hold more than
        /// a small cascade budget; one time in six more than a level-0 bucket holds
        /// (`TimerWheel.levelZeroCapacity`), all within one level-0 slot, so that moving them down
        /// fills that bucket and sends the rest to the heap.
        mutating func scheduleCluster() {
            let width = Int64(1) << min(62, tickShift + 6 * (1 + Int(number(below: 2))))
            let base = Nanoseconds.adding(now, width + Int64(number(below: UInt64(width))))
            let full = TimerWheel<LoopTimer>.levelZeroCapacity
            let big = number(below: 6) == 0
            let count = big ? full + 1 + Int(number(below: UInt64(full))) : 3 + Int(number(below: 8))
            for _ in 0..<count {
                let deadline = Nanoseconds.adding(base, Int64(number(below: UInt64(max(1, width / 64)))))
                let timer = LoopTimer(core: nil, deadline: deadline, isWall: false, action: {})
                let sequence = store.nextSequence
                store.insert(timer)
                pending[ObjectIdentifier(timer)] = Pending(timer: timer, deadline: deadline, sequence: sequence, wall: false)
            }
        }

        mutating func schedule() {
            if number(below: 8) == 0 { return scheduleCluster() }
            let wall = number(below: 8) == 0
            let periodic = !wall && number(below: 6) == 0
            // A periodic timer starts at now or later, as the public calls make it (negative delays
            // mean now): its grid counts ticks from there.
            let deadline = Nanoseconds.adding(wall ? wallNow : now, periodic ? max(0, delay()) : delay())
            let timer: LoopTimer
            if periodic {
                let interval = Int64(1) << number(below: UInt64(tickShift + 14))
                timer = PeriodicLoopTimer(core: nil, deadline: deadline, isWall: false, interval: max(1, interval), leeway: 0) { _ in }
            } else {
                timer = LoopTimer(core: nil, deadline: deadline, isWall: wall, action: {})
            }
            let sequence = store.nextSequence
            store.insert(timer)
            pending[ObjectIdentifier(timer)] = Pending(timer: timer, deadline: deadline, sequence: sequence, wall: wall)
        }

        mutating func cancel() {
            guard !pending.isEmpty else {
                if let old = gone.randomElement(using: &random) {
                    let removed = store.remove(old)
                    #expect(!removed, "a timer that fired or was cancelled was removed again")
                }
                return
            }
            let index = pending.index(pending.startIndex, offsetBy: Int(number(below: UInt64(pending.count))))
            let victim = pending.remove(at: index).value
            let removed = store.remove(victim.timer)
            #expect(removed, "a pending timer was not in the store")
            gone.append(victim.timer)
        }

        /// Re-arms a pending one-shot timer, as `LoopCore.rearm` does: on the loop thread through
        /// the store; from another thread by writing the deadline in place, queueing it when it is
        /// earlier (the loop files it again when it next takes its queue).
        mutating func rearm() {
            let oneShots = pending.values.filter { !$0.timer.isPeriodic }
            guard !oneShots.isEmpty else { return }
            var target = oneShots[Int(number(below: UInt64(oneShots.count)))]
            let now = target.wall ? wallNow : self.now
            // Mostly later (an idle timeout pushed back), sometimes anywhere from now on.
            let deadline =
                number(below: 4) != 0
                ? Nanoseconds.adding(target.deadline, Int64(number(below: 1 << UInt64(tickShift + 14))))
                : Nanoseconds.adding(now, max(0, delay()))
            switch number(below: 3) {
            case 0:
                // Filed again by it, or in the wheel, found by it when the bucket moves.
                store.rearm(target.timer, to: deadline)
                target.staleKey = false
                rearms.onLoop += 1
            default:
                // `LoopCore.rearm` from another thread: the deadline in place; queued if earlier.
                let earlier = deadline < target.timer.exchangeDeadline(deadline)
                if earlier {
                    queuedRearms.append(target.timer)
                    rearms.earlierElsewhere += 1
                } else {
                    if target.timer.heapIndex >= 0 { target.staleKey = true }
                    rearms.laterElsewhere += 1
                }
            }
            target.deadline = deadline
            pending[ObjectIdentifier(target.timer)] = target
        }

        /// The loop takes its queue: timers re-armed earlier from another thread are filed again
        /// by the deadline they have (nothing for one that fired or was cancelled meanwhile).
        mutating func fileQueuedRearms() {
            for timer in queuedRearms {
                store.reposition(timer)
                pending[ObjectIdentifier(timer)]?.staleKey = false
            }
            queuedRearms.removeAll()
        }

        /// Whether to check the store's invariants after `step`: each of the first 64, then every
        /// 16th. A check visits every slot and bucket (some 25 µs in a debug build): after every
        /// step it made the suite three times slower. A broken invariant stays broken until its
        /// timer fires or is cancelled, so a sampled check still finds it, and the first steps of
        /// each script, checked one by one, start from an empty store.
        func checksInvariants(at step: Int) -> Bool {
            step < 64 || step % 16 == 0
        }

        /// The store's invariants: none broken, a timer whose earlier deadline is still queued
        /// judged by the deadline it was filed by (its re-arm is on its way), any other by its own.
        mutating func checkInvariants() {
            let queued = Set(queuedRearms.map(ObjectIdentifier.init))
            let violations = store.invariantViolations { queued.contains(ObjectIdentifier($0)) }
            #expect(violations.isEmpty, "seed \(seed): \(violations.prefix(3))")
            checkedSteps += 1
        }

        mutating func advance() {
            switch number(below: 5) {
            case 0:
                // To the wake-up the store armed, as a loop would.
                if let armed = store.armedDeadline, armed > now { now = armed }
            case 4:
                // To one tick before the wheel's next bucket begins: where a big bucket starts to
                // move down in chunks.
                let next = store.monotonic.nextAdvance
                if next > now && next != .max { now = next }
            case 1:
                let scale = number(below: UInt64(min(62, tickShift + 40)))
                now = Nanoseconds.adding(now, Int64(number(below: 1 << scale)))
            default:
                now = Nanoseconds.adding(now, Int64(number(below: 1 << UInt64(tickShift + 2))))
            }
            wallNow = Nanoseconds.adding(wallNow, Int64(number(below: 1 << 30)))
            if let armed = store.armedDeadline, armed <= now { store.driverFired() }
        }

        mutating func stepWallClock() {
            let step = Int64(number(below: 1 << 40)) - (1 << 39)
            wallNow = Nanoseconds.adding(wallNow, step)
            store.wallClockChanged()
        }

        /// The prepare callback's question: the answer must never sleep past a pending deadline.
        mutating func checkWake() {
            // Before it arms, the loop files what its queue holds (`TimerDriver.armAndPromise`).
            fileQueuedRearms()
            let earliest = pending.values.filter { !$0.wall && $0.deadline != Nanoseconds.never }.map(\.deadline).min()
            let earliestWall = pending.values.filter { $0.wall && $0.deadline != Nanoseconds.never }.map(\.deadline).min()
            var bound = Int64.max
            if let earliest { bound = earliest }
            if let earliestWall { bound = min(bound, Nanoseconds.adding(now, Nanoseconds.subtracting(earliestWall, wallNow))) }
            let wake = store.nextWake(monotonicNow: now, wallNow: wallNow)
            switch wake {
            case .runNow:
                // Or a big bucket is moving down in chunks: the loop looks again at once. Or a timer
                // pushed back from another thread is due by its old key: the pass that pops it
                // files it again.
                let staleKeys = pending.values.contains { $0.staleKey }
                #expect(bound <= now || store.isCascading || staleKeys, "runNow with nothing due (earliest \(bound), now \(now))")
            case .arm(let nanoseconds):
                #expect(nanoseconds >= 1)
                #expect(Nanoseconds.adding(now, nanoseconds) <= bound, "armed past a pending deadline")
                #expect(bound > now, "armed with a timer due")
            case .keep:
                if bound != .max {
                    #expect(bound > now, "kept with a timer due")
                    #expect((store.armedDeadline ?? .max) <= bound, "kept an arming past a pending deadline")
                }
            }
        }

        /// Pops what is due, as `TimerDriver.fireDue` does (a one-shot timer popped not due, pushed
        /// back from another thread, goes back with its sequence), and checks it against the model.
        mutating func fireDue() {
            // A batch takes the loop's queue before it fires.
            fileQueuedRearms()
            let limit = store.nextSequence
            let stale = Set(pending.values.filter(\.staleKey).map { ObjectIdentifier($0.timer) })
            var expected = pending.values.filter { !$0.wall && $0.deadline <= now && $0.sequence < limit }
            expected.sort { ($0.deadline, $0.sequence) < ($1.deadline, $1.sequence) }
            var popped: [LoopTimer] = []
            var rearmed: [Pending] = []
            while let due = store.popDue(monotonicNow: now, limit: limit) {
                if !due.timer.isPeriodic, due.timer.deadline > now {
                    // Not due after all: back with its sequence, keyed by its deadline now.
                    store.refile(due.timer, sequence: due.sequence)
                    pending[ObjectIdentifier(due.timer)]?.staleKey = false
                    rearms.refiled += 1
                    continue
                }
                popped.append(due.timer)
                guard let entry = pending.removeValue(forKey: ObjectIdentifier(due.timer)) else {
                    Issue.record("a timer fired that was not pending (cancelled, or fired before)")
                    continue
                }
                #expect(due.timer.deadline == entry.deadline, "fired by a deadline it no longer had")
                if !entry.staleKey {
                    #expect(due.lateness == Nanoseconds.subtracting(now, entry.deadline), "fired with a wrong lateness")
                }
                if let periodic = due.timer as? PeriodicLoopTimer, number(below: 2) == 0 {
                    let sequence = store.nextSequence
                    store.reinsertAfterTick(periodic, monotonicNow: now)
                    #expect(periodic.deadline > now || now == .max)
                    rearmed.append(Pending(timer: periodic, deadline: periodic.deadline, sequence: sequence, wall: false))
                } else {
                    gone.append(due.timer)
                }
            }
            #expect(Set(popped.map(ObjectIdentifier.init)) == Set(expected.map { ObjectIdentifier($0.timer) }), "monotonic timers were missed, or fired before their deadline")
            #expect(
                popped.filter { !stale.contains(ObjectIdentifier($0)) }.map(ObjectIdentifier.init)
                    == expected.filter { !$0.staleKey }.map { ObjectIdentifier($0.timer) },
                "monotonic timers fired out of (deadline, sequence) order"
            )
            for entry in rearmed { pending[ObjectIdentifier(entry.timer)] = entry }
            var expectedWall = pending.values.filter { $0.wall && $0.deadline <= wallNow && $0.sequence < limit }
            expectedWall.sort { ($0.deadline, $0.sequence) < ($1.deadline, $1.sequence) }
            var poppedWall: [LoopTimer] = []
            while let due = store.popDueWall(wallNow: wallNow, limit: limit) {
                if due.timer.deadline > wallNow {
                    store.refile(due.timer, sequence: due.sequence)
                    pending[ObjectIdentifier(due.timer)]?.staleKey = false
                    rearms.refiled += 1
                    continue
                }
                poppedWall.append(due.timer)
                guard let entry = pending.removeValue(forKey: ObjectIdentifier(due.timer)) else {
                    Issue.record("a wall-clock timer fired that was not pending")
                    continue
                }
                #expect(due.timer.deadline == entry.deadline && entry.deadline <= wallNow, "a wall-clock timer fired early")
                gone.append(due.timer)
            }
            #expect(Set(poppedWall.map(ObjectIdentifier.init)) == Set(expectedWall.map { ObjectIdentifier($0.timer) }), "wall-clock timers were missed, or fired early")
            #expect(
                poppedWall.filter { !stale.contains(ObjectIdentifier($0)) }.map(ObjectIdentifier.init)
                    == expectedWall.filter { !$0.staleKey }.map { ObjectIdentifier($0.timer) },
                "wall-clock timers fired out of order"
            )
            fired += popped.count + poppedWall.count
        }

        mutating func run(steps: Int) {
            for step in 0..<steps {
                switch number(below: 24) {
                case 0..<8: schedule()
                case 8..<12: cancel()
                case 20..<23: rearm()
                case 23: fileQueuedRearms()
                case 12..<17:
                    advance()
                    checkWake()
                    fireDue()
                case 17: stepWallClock()
                case 18:
                    checkWake()
                    // Compacts sparse buckets when nothing is due soon: positions must stay right.
                    store.giveBackMemory(monotonicNow: now, wallNow: wallNow)
                default: fireDue()
                }
                #expect(store.count == pending.count, "the store counts \(store.count), the model \(pending.count)")
                if checksInvariants(at: step) { checkInvariants() }
                if store.isCascading { cascadingSteps += 1 }
                if gone.count > 256 { gone.removeFirst(128) }
            }
            let left = store.removeAll()
            #expect(Set(left.map(ObjectIdentifier.init)) == Set(pending.keys), "shutdown did not return exactly the pending timers")
            #expect(left.allSatisfy { $0.heapIndex == -1 })
            #expect(store.count == 0)
        }
    }

    @Test(
        "Random scripts: every timer fires once or never, never early, in (deadline, sequence) order",
        arguments: [0, 3, DeadlineStore.tickShift], [DeadlineStore.cascadeBudget, 2]
    )
    func randomScripts(tickShift: Int, cascadeBudget: Int) {
        // A budget of 2 moves every bucket above level 0 of more than two timers in chunks, with
        // cancels, inserts and fires between them.
        var totalFired = 0
        var cascadingSteps = 0
        var rearms = (onLoop: 0, laterElsewhere: 0, earlierElsewhere: 0, refiled: 0)
        var checkedSteps = 0
        for seed in 0..<60 as Range<UInt64> {
            let starts: [Int64] = [0, 1 << 40, Int64.max - (1 << 50), -(1 << 45)]
            var script = Script(
                seed: seed &* 7_919 &+ UInt64(tickShift),
                tickShift: tickShift,
                start: starts[Int(seed % 4)],
                cascadeBudget: cascadeBudget
            )
            script.run(steps: 1_500)
            totalFired += script.fired
            cascadingSteps += script.cascadingSteps
            rearms.onLoop += script.rearms.onLoop
            rearms.laterElsewhere += script.rearms.laterElsewhere
            rearms.earlierElsewhere += script.rearms.earlierElsewhere
            rearms.refiled += script.rearms.refiled
            checkedSteps += script.checkedSteps
        }
        #expect(totalFired > 1_000, "the scripts fired only \(totalFired) timers: they test too little")
        #expect(
            rearms.onLoop > 500 && rearms.laterElsewhere > 500 && rearms.earlierElsewhere > 100 && rearms.refiled > 20,
            "the scripts reach a re-arm path too rarely: \(rearms)"
        )
        #expect(checkedSteps > 9_000, "the invariants were checked after only \(checkedSteps) steps")
        if cascadeBudget == 2 {
            #expect(cascadingSteps > 100, "only \(cascadingSteps) steps found a cascade under way: the scripts test it too little")
        }
    }

    @Test("A timer at each level edge of the wheel fires exactly at its deadline, from the heap")
    func levelEdges() {
        let shift = DeadlineStore.tickShift
        var store = DeadlineStore()
        let now: Int64 = 123_456_789
        var timers: [LoopTimer] = []
        for level in 0...6 {
            let width = Int64(1) << (shift + 6 * level)
            let edge = (now / width + 1) * width
            for deadline in [edge - 1, edge, edge + 1] where deadline > now {
                timers.append(LoopTimer(core: nil, deadline: deadline, isWall: false, action: {}))
            }
        }
        for timer in timers { store.insert(timer) }
        #expect(store.wheel.count > 0 && store.count == timers.count)
        let deadlines = Self.deadlines(of: timers)
        let fired = Self.fireAll(&store, from: now)
        Self.expectOnTime(fired, deadlines: deadlines, from: now)
        #expect(fired.map(\.timer.deadline) == timers.map(\.deadline).sorted())
    }

    /// A timer popped by ``fireAll(_:from:)``: its lateness as the store measured it, and the clock
    /// it was popped at.
    typealias Fired = (timer: LoopTimer, lateness: Int64, clock: Int64)

    /// Runs the store as a loop would, from `clock` until it is empty: sleep until the wake-up it
    /// asks for, pop what is due. Returns every timer popped, in order.
    static func fireAll(_ store: inout DeadlineStore, from clock: Int64) -> [Fired] {
        var clock = clock
        var fired: [Fired] = []
        for _ in 0..<100_000 where store.count > 0 {
            switch store.nextWake(monotonicNow: clock, wallNow: 0) {
            case .arm(let nanoseconds): clock += nanoseconds
            case .runNow: break
            case .keep: clock = store.armedDeadline ?? clock
            }
            store.driverFired()
            while let due = store.popDue(monotonicNow: clock, limit: store.nextSequence) { fired.append((due.timer, due.lateness, clock)) }
        }
        return fired
    }

    /// The deadlines the test gave its timers, to check ``fireAll(_:from:)``'s pops against.
    static func deadlines(of timers: [LoopTimer]) -> [ObjectIdentifier: Int64] {
        Dictionary(uniqueKeysWithValues: timers.map { (ObjectIdentifier($0), $0.deadline) })
    }

    /// Expects each timer ``fireAll(_:from:)`` popped to have fired at the deadline the test gave it
    /// (`deadlines`), or at `from` if it was due by then: the store wakes at the first deadline, so
    /// never early and never late; its deadline still the one given, its lateness measured from it.
    static func expectOnTime(
        _ fired: [Fired],
        deadlines: [ObjectIdentifier: Int64],
        from: Int64,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        for due in fired {
            guard let deadline = deadlines[ObjectIdentifier(due.timer)] else {
                Issue.record("a timer fired that the test did not schedule", sourceLocation: sourceLocation)
                continue
            }
            let onTime = due.timer.deadline == deadline && due.clock == max(deadline, from) && due.lateness == due.clock - deadline
            #expect(onTime, "due at \(deadline) (now \(due.timer.deadline)), fired at \(due.clock), lateness \(due.lateness)", sourceLocation: sourceLocation)
        }
    }
}
