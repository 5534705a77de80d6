import Scheduling
import Testing

@testable import LoopScheduling

/// The timer store (wheel + heaps) against a plain reference model, on seeded random scripts that
/// drive it as the loop does, through its mutating API only: schedule, cancel, advance time, ask
/// for the wake-up, pop what is due, re-arm periodic timers, step the wall clock.
///
/// Every script checks, at every step: each timer fires exactly once or never, never early, never
/// after it was cancelled, in `(deadline, sequence)` order with every other due timer of its
/// clock; the store never sleeps past a pending deadline; its count is the model's.
@Suite("Loop timer store against a model")
struct LoopTimerStoreModelTests {
    struct Pending {
        let timer: LoopTimer
        var deadline: Int64
        var sequence: UInt64
        let wall: Bool
    }

    /// One script: the store and the model side by side.
    struct Script: ~Copyable {
        /// Seeded, so a failing script replays.
        var random: SplitMix
        let tickShift: Int
        var store: LoopTimerStore
        var now: Int64
        var wallNow: Int64
        var pending: [ObjectIdentifier: Pending] = [:]
        var gone: [LoopTimer] = []
        var fired = 0
        /// Steps after which a big bucket was moving down in chunks.
        var cascadingSteps = 0

        init(seed: UInt64, tickShift: Int, start: Int64, cascadeBudget: Int = LoopTimerStore.cascadeBudget) {
            random = SplitMix(seed: seed)
            self.tickShift = tickShift
            store = LoopTimerStore(tickShift: tickShift, cascadeBudget: cascadeBudget)
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
            let earliest = pending.values.filter { !$0.wall && $0.deadline != Nanoseconds.never }.map(\.deadline).min()
            let earliestWall = pending.values.filter { $0.wall && $0.deadline != Nanoseconds.never }.map(\.deadline).min()
            var bound = Int64.max
            if let earliest { bound = earliest }
            if let earliestWall { bound = min(bound, Nanoseconds.adding(now, Nanoseconds.subtracting(earliestWall, wallNow))) }
            let wake = store.nextWake(monotonicNow: now, wallNow: wallNow)
            switch wake {
            case .runNow:
                // Or a big bucket is moving down in chunks: the loop looks again at once.
                #expect(bound <= now || store.isCascading, "runNow with nothing due (earliest \(bound), now \(now))")
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

        /// Pops what is due, as `fireDueTimers` does, and checks it against the model.
        mutating func fireDue() {
            let limit = store.nextSequence
            var expected = pending.values.filter { !$0.wall && $0.deadline <= now && $0.sequence < limit }
            expected.sort { ($0.deadline, $0.sequence) < ($1.deadline, $1.sequence) }
            var popped: [LoopTimer] = []
            var rearmed: [Pending] = []
            while let due = store.popDue(monotonicNow: now, limit: limit) {
                popped.append(due.timer)
                guard let entry = pending.removeValue(forKey: ObjectIdentifier(due.timer)) else {
                    Issue.record("a timer fired that was not pending (cancelled, or fired before)")
                    continue
                }
                #expect(due.lateness == Nanoseconds.subtracting(now, entry.deadline) && due.lateness >= 0, "fired early or with a wrong lateness")
                if let periodic = due.timer as? PeriodicLoopTimer, number(below: 2) == 0 {
                    let sequence = store.nextSequence
                    store.reinsertAfterTick(periodic, monotonicNow: now)
                    #expect(periodic.deadline > now || now == .max)
                    rearmed.append(Pending(timer: periodic, deadline: periodic.deadline, sequence: sequence, wall: false))
                } else {
                    gone.append(due.timer)
                }
            }
            #expect(popped.map(ObjectIdentifier.init) == expected.map { ObjectIdentifier($0.timer) }, "monotonic timers fired out of (deadline, sequence) order or were missed")
            for entry in rearmed { pending[ObjectIdentifier(entry.timer)] = entry }
            var expectedWall = pending.values.filter { $0.wall && $0.deadline <= wallNow && $0.sequence < limit }
            expectedWall.sort { ($0.deadline, $0.sequence) < ($1.deadline, $1.sequence) }
            var poppedWall: [LoopTimer] = []
            while let due = store.popDueWall(wallNow: wallNow, limit: limit) {
                poppedWall.append(due.timer)
                if pending.removeValue(forKey: ObjectIdentifier(due.timer)) == nil {
                    Issue.record("a wall-clock timer fired that was not pending")
                }
                gone.append(due.timer)
            }
            #expect(poppedWall.map(ObjectIdentifier.init) == expectedWall.map { ObjectIdentifier($0.timer) }, "wall-clock timers out of order or missed")
            fired += popped.count + poppedWall.count
        }

        mutating func run(steps: Int) {
            for _ in 0..<steps {
                switch number(below: 20) {
                case 0..<8: schedule()
                case 8..<12: cancel()
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
        arguments: [0, 3, LoopTimerStore.tickShift], [LoopTimerStore.cascadeBudget, 2]
    )
    func randomScripts(tickShift: Int, cascadeBudget: Int) {
        // A budget of 2 moves every bucket above level 0 of more than two timers in chunks, with
        // cancels, inserts and fires between them.
        var totalFired = 0
        var cascadingSteps = 0
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
        }
        #expect(totalFired > 1_000, "the scripts fired only \(totalFired) timers: they test too little")
        if cascadeBudget == 2 {
            #expect(cascadingSteps > 100, "only \(cascadingSteps) steps found a cascade under way: the scripts test it too little")
        }
    }

    @Test("A timer at each level edge of the wheel fires exactly at its deadline, from the heap")
    func levelEdges() {
        let shift = LoopTimerStore.tickShift
        var store = LoopTimerStore()
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
        let fired = Self.fireAll(&store, from: now).map { due in
            #expect(due.lateness == 0, "deadline \(due.timer.deadline) fired \(due.lateness) ns late")
            return due.timer.deadline
        }
        #expect(fired == timers.map(\.deadline).sorted())
    }

    @Test("A full level-0 bucket sends the rest to the heap: cancels find both, holes take new timers, all fire in (deadline, sequence) order")
    func fullLevelZeroBucket() {
        let tick = Int64(1) << LoopTimerStore.tickShift
        let full = TimerWheel<LoopTimer>.levelZeroCapacity
        var store = LoopTimerStore()
        var random = SplitMix(seed: 5)
        // 200 timers within tick 5, in random order, a quarter of them on one shared deadline.
        func make() -> LoopTimer {
            let deadline = random.next() % 4 == 0 ? 5 * tick + 77 : 5 * tick + Int64(random.next() % UInt64(tick))
            return LoopTimer(core: nil, deadline: deadline, isWall: false, action: {})
        }
        var timers = (0..<200).map { _ in make() }
        var sequences: [ObjectIdentifier: UInt64] = [:]
        for timer in timers {
            sequences[ObjectIdentifier(timer)] = store.nextSequence
            store.insert(timer)
        }
        #expect(store.wheel.count == full && store.monotonic.heap.count == 200 - full)
        // Cancels from the bucket (positions -2 and down) and from the heap (0 and up).
        var cancelled = (inWheel: 0, inHeap: 0)
        for _ in 0..<40 {
            let victim = timers.remove(at: Int(random.next() % UInt64(timers.count)))
            if victim.heapIndex <= -2 { cancelled.inWheel += 1 } else { cancelled.inHeap += 1 }
            let removed = store.remove(victim)
            #expect(removed && victim.heapIndex == -1)
        }
        #expect(cancelled.inWheel > 0 && cancelled.inHeap > 0)
        #expect(store.wheel.count == full - cancelled.inWheel)
        // New timers take the holes first; past a full bucket again, the heap.
        for _ in 0..<(cancelled.inWheel + 10) {
            let timer = make()
            sequences[ObjectIdentifier(timer)] = store.nextSequence
            store.insert(timer)
            timers.append(timer)
        }
        #expect(store.wheel.count == full && store.count == timers.count)
        #expect(store.wheel.capacity <= full, "a level-0 bucket grew past its one allocation")
        let fired = Self.fireAll(&store, from: 0)
        #expect(fired.allSatisfy { $0.lateness >= 0 }, "a timer fired early")
        let expected = timers.sorted {
            ($0.deadline, sequences[ObjectIdentifier($0)]!) < ($1.deadline, sequences[ObjectIdentifier($1)]!)
        }
        #expect(fired.map { ObjectIdentifier($0.timer) } == expected.map(ObjectIdentifier.init))
    }

    @Test("A timer far away is cancelled from the wheel without touching the heap; Int64 limits stay in the heap")
    func farCancelAndLimits() {
        var store = LoopTimerStore()
        let far = LoopTimer(core: nil, deadline: 30_000_000_000, isWall: false, action: {})
        let never = LoopTimer(core: nil, deadline: Nanoseconds.never, isWall: false, action: {})
        let almost = LoopTimer(core: nil, deadline: Int64.max - 1, isWall: false, action: {})
        let past = LoopTimer(core: nil, deadline: Int64.min, isWall: false, action: {})
        for timer in [far, never, almost, past] { store.insert(timer) }
        #expect(store.wheel.count == 1 && store.monotonic.heap.count == 3)
        let removed = store.remove(far)
        #expect(removed && store.wheel.count == 0 && far.heapIndex == -1)
        let again = store.remove(far)
        #expect(!again)
        let due = store.popDue(monotonicNow: 0, limit: store.nextSequence)
        #expect(due?.timer === past && due?.lateness == Int64.max)
        _ = store.removeAll()
    }

    @Test("A lone timer, or a full level-0 bucket, due soon costs one wake-up, at its deadline; a big bucket stays in the wheel until one tick before")
    func smallBucketsMoveBeforeBlocking() {
        var store = LoopTimerStore()
        store.insert(LoopTimer(core: nil, deadline: 10_000_000, isWall: false, action: {}))
        #expect(store.wheel.count == 1)
        let lone = store.nextWake(monotonicNow: 0, wallNow: 0)
        #expect(lone == .arm(in: 10_000_000))
        #expect(store.wheel.count == 0 && store.monotonic.heap.count == 1)
        // A level-0 bucket holds at most `levelZeroCapacity` (fewer than `smallBucket`): the one
        // past it is in the heap already, and the bucket joins it before the loop blocks.
        let full = TimerWheel<LoopTimer>.levelZeroCapacity
        #expect(full <= LoopTimerStore.smallBucket)
        var level0 = LoopTimerStore()
        for _ in 0...full { level0.insert(LoopTimer(core: nil, deadline: 10_000_000, isWall: false, action: {})) }
        #expect(level0.wheel.count == full && level0.monotonic.heap.count == 1)
        let once = level0.nextWake(monotonicNow: 0, wallNow: 0)
        #expect(once == .arm(in: 10_000_000))
        #expect(level0.wheel.count == 0)
        // A level-1 bucket (100 ms: tick 95) of more than `smallBucket` waits for its move.
        let tick = Int64(1) << LoopTimerStore.tickShift
        var busy = LoopTimerStore()
        for _ in 0...LoopTimerStore.smallBucket { busy.insert(LoopTimer(core: nil, deadline: 100_000_000, isWall: false, action: {})) }
        let early = busy.nextWake(monotonicNow: 0, wallNow: 0)
        #expect(early == .arm(in: 63 * tick))
        #expect(busy.wheel.count == LoopTimerStore.smallBucket + 1)
        _ = store.removeAll()
        _ = level0.removeAll()
        _ = busy.removeAll()
    }

    @Test("Emptied wheel buckets give their memory back when the store is quiet")
    func wheelMemory() {
        var store = LoopTimerStore()
        let entries = (0..<20_000).map { _ in LoopTimer(core: nil, deadline: 30_000_000_000, isWall: false, action: {}) }
        for entry in entries { store.insert(entry) }
        #expect(store.wheel.count == entries.count)
        #expect(store.slotCapacity >= 20_000)
        for entry in entries { store.remove(entry) }
        store.giveBackMemory(monotonicNow: 0, wallNow: 0)
        #expect(store.slotCapacity < 2_048)
    }

    @Test("Cancels leave holes that later inserts reuse, and compaction renumbers the rest: every timer still fires once, in order")
    func bucketHoles() {
        var store = LoopTimerStore()
        var random = SplitMix(seed: 42)
        // One bucket of the wheel: 30 s out, within one level-2 slot.
        func far(_ index: Int) -> LoopTimer {
            LoopTimer(core: nil, deadline: 30_000_000_000 + Int64(index % 97) * 1_000, isWall: false, action: {})
        }
        var live = (0..<2_000).map(far)
        for timer in live { store.insert(timer) }
        var sequenceOf: [ObjectIdentifier: Int] = [:]
        for (index, timer) in live.enumerated() { sequenceOf[ObjectIdentifier(timer)] = index }
        // Random cancels, each followed now and then by an insert that takes the newest hole.
        var next = live.count
        for round in 0..<1_800 {
            let victim = live.remove(at: Int(random.next() % UInt64(live.count)))
            let removed = store.remove(victim)
            let again = store.remove(victim)
            #expect(removed && !again && victim.heapIndex == -1)
            if round % 10 == 0 {
                let timer = far(next)
                sequenceOf[ObjectIdentifier(timer)] = next
                next += 1
                store.insert(timer)
                live.append(timer)
            }
        }
        #expect(store.wheel.count == live.count)
        let before = store.slotCapacity
        store.giveBackMemory(monotonicNow: 0, wallNow: 0)
        #expect(store.slotCapacity < before, "a sparse bucket was not compacted")
        // After compaction every position is right: cancel a few more, then fire the rest.
        for _ in 0..<50 {
            let victim = live.remove(at: Int(random.next() % UInt64(live.count)))
            let removed = store.remove(victim)
            #expect(removed)
        }
        let fired = Self.fireAll(&store, from: 0).map { due in
            #expect(due.lateness >= 0)
            return due.timer
        }
        let expected = live.sorted {
            ($0.deadline, sequenceOf[ObjectIdentifier($0)]!) < ($1.deadline, sequenceOf[ObjectIdentifier($1)]!)
        }
        #expect(fired.map(ObjectIdentifier.init) == expected.map(ObjectIdentifier.init))
    }

    /// Runs the store as a loop would, from `clock` until it is empty: sleep until the wake-up it
    /// asks for, pop what is due. Returns every timer popped, in order, with its lateness.
    static func fireAll(_ store: inout LoopTimerStore, from clock: Int64) -> [(timer: LoopTimer, lateness: Int64)] {
        var clock = clock
        var fired: [(timer: LoopTimer, lateness: Int64)] = []
        for _ in 0..<100_000 where store.count > 0 {
            switch store.nextWake(monotonicNow: clock, wallNow: 0) {
            case .arm(let nanoseconds): clock += nanoseconds
            case .runNow: break
            case .keep: clock = store.armedDeadline ?? clock
            }
            store.driverFired()
            while let due = store.popDue(monotonicNow: clock, limit: store.nextSequence) { fired.append(due) }
        }
        return fired
    }
}
