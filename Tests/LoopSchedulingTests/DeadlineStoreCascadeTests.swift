import Scheduling
import Testing

@testable import LoopEngine
@testable import LoopScheduling

/// A big wheel bucket moves down a chunk per look (`TimerWheel.Cascade`), so that moving thousands
/// of timers never stalls the loop in one go: the promises that must hold meanwhile.
@Suite("Loop timer store: big buckets move in chunks")
struct DeadlineStoreCascadeTests {
    /// The tick (level-0 slot) of the default store, and a level-1 slot: 64 ticks.
    static let tick = Int64(1) << DeadlineStore.tickShift
    static let level1 = 64 * tick

    /// `count` timers spread over the level-1 slot `[slot × 64 ticks, +64 ticks)`, in random order.
    static func bucket(_ count: Int, slot: Int64, seed: UInt64) -> [LoopTimer] {
        var random = SplitMix(seed: seed)
        return (0..<count).map { _ in
            let deadline = slot * level1 + Int64(random.next() % UInt64(level1))
            return LoopTimer(core: nil, deadline: deadline, isWall: false, action: {})
        }
    }

    /// A store holding `timers`, in a level-1 `slot`'s bucket, that began moving it down in chunks:
    /// it looked one tick before the bucket's range.
    static func cascading(_ timers: [LoopTimer], budget: Int, slot: Int64) -> DeadlineStore {
        var store = DeadlineStore(cascadeBudget: budget)
        for timer in timers { store.insert(timer) }
        _ = store.nextWake(monotonicNow: slot * level1 - tick, wallNow: 0)
        let cascading = store.isCascading
        #expect(cascading, "no cascade began")
        return store
    }

    @Test("Before its first tick a big bucket moves a budget per look; cancels find its timers wherever they are; the rest fire once, in order, never early")
    func chunksBeforeTheFirstTick() {
        let budget = 8
        var store = DeadlineStore(cascadeBudget: budget)
        var timers = Self.bucket(200, slot: 2, seed: 7)
        for timer in timers { store.insert(timer) }
        #expect(store.wheel.count == 200)
        // The store wakes ahead of the bucket's range by one tick per chunk the move will take.
        let start = 2 * Self.level1
        let lead = Int64(200 / budget + 1)
        var wake = store.nextWake(monotonicNow: 0, wallNow: 0)
        #expect(wake == .arm(in: start - lead * Self.tick))
        let now = start - lead * Self.tick
        store.driverFired()
        var looks = 0
        var cancelled = 0
        var random = SplitMix(seed: 11)
        repeat {
            wake = store.nextWake(monotonicNow: now, wallNow: 0)
            looks += 1
            // Work left: the loop must look again at once, not block until the bucket's tick.
            let cascading = store.isCascading
            if cascading { #expect(wake == .runNow) }
            // Nothing of the bucket is due before its first tick.
            #expect(store.popDue(monotonicNow: now, limit: store.nextSequence) == nil)
            // Cancels meanwhile: a timer not moved yet, or one already filed below or in the heap.
            for _ in 0..<2 where !timers.isEmpty {
                let victim = timers.remove(at: Int(random.next() % UInt64(timers.count)))
                let removed = store.remove(victim)
                let again = store.remove(victim)
                #expect(removed && !again && victim.heapIndex == -1)
                cancelled += 1
            }
            #expect(store.count == timers.count)
        } while store.isCascading && looks < 1_000
        // 200 slots at 8 a look, a few cancels away from the end: more than one look, at most 25.
        #expect(looks > 1 && looks <= 200 / budget, "the bucket moved in \(looks) looks")
        let deadlines = DeadlineStoreModelTests.deadlines(of: timers)
        let fired = DeadlineStoreModelTests.fireAll(&store, from: now)
        DeadlineStoreModelTests.expectOnTime(fired, deadlines: deadlines, from: now)
        let expected = timers.sorted { $0.deadline < $1.deadline }
        #expect(fired.map { ObjectIdentifier($0.timer) } == expected.map(ObjectIdentifier.init))
        #expect(cancelled == 2 * looks && store.count == 0)
    }

    @Test("A bucket whose first tick has come, or a look at or after it, moves the rest at once: nothing due is left behind")
    func theFirstTickMovesTheRest() {
        var store = DeadlineStore(cascadeBudget: 4)
        let timers = Self.bucket(100, slot: 3, seed: 3)
        for timer in timers { store.insert(timer) }
        let start = 3 * Self.level1
        // Begun a tick early, then the clock jumps past the whole bucket: one look moves the rest.
        _ = store.nextWake(monotonicNow: start - Self.tick, wallNow: 0)
        let cascading = store.isCascading
        #expect(cascading)
        let late = start + Self.level1
        var popped: [LoopTimer] = []
        while let due = store.popDue(monotonicNow: late, limit: store.nextSequence) { popped.append(due.timer) }
        let finished = !store.isCascading
        #expect(finished)
        #expect(popped.map(ObjectIdentifier.init) == timers.sorted { $0.deadline < $1.deadline }.map(ObjectIdentifier.init))
        // Never begun: a look after the first tick moves the bucket whole, no chunk left for later.
        var skipped = DeadlineStore(cascadeBudget: 4)
        let others = Self.bucket(100, slot: 5, seed: 5)
        for timer in others { skipped.insert(timer) }
        var all: [LoopTimer] = []
        if let first = skipped.popDue(monotonicNow: 6 * Self.level1, limit: skipped.nextSequence) { all.append(first.timer) }
        let whole = !skipped.isCascading
        #expect(whole, "a bucket already due began a chunked move")
        while let due = skipped.popDue(monotonicNow: 6 * Self.level1, limit: skipped.nextSequence) { all.append(due.timer) }
        #expect(all.map(ObjectIdentifier.init) == others.sorted { $0.deadline < $1.deadline }.map(ObjectIdentifier.init))
        #expect(skipped.count == 0)
    }

    @Test("A timer due exactly at the bucket's first nanosecond, not moved yet, waits until then and fires then")
    func theFirstNanosecond() {
        let start = 2 * Self.level1
        // The one at its very first nanosecond, then forty timers later in the bucket: a cascade
        // walks the newest block first, so the edge timer's block moves last and no chunk before
        // the deadline reaches it.
        let edge = LoopTimer(core: nil, deadline: start, isWall: false, action: {})
        let timers = [edge] + Self.bucket(40, slot: 2, seed: 13).map { timer -> LoopTimer in
            LoopTimer(core: nil, deadline: max(timer.deadline, start + 1), isWall: false, action: {})
        }
        var store = Self.cascading(timers, budget: 4, slot: 2)
        #expect(edge.heapIndex <= -2, "the edge timer moved in the first chunk: the test no longer tests it")
        // One nanosecond before: nothing is due, and popping does not move the rest.
        let early = store.popDue(monotonicNow: start - 1, limit: store.nextSequence)
        #expect(early == nil)
        let stillCascading = store.isCascading
        #expect(stillCascading)
        // At the first nanosecond the rest moves at once, and the edge timer fires first, on time.
        let due = store.popDue(monotonicNow: start, limit: store.nextSequence)
        #expect(due?.timer === edge && due?.lateness == 0)
        let finished = !store.isCascading
        #expect(finished)
        _ = store.removeAll()
    }

    @Test("Cancelling every timer a cascade has not moved yet ends it; a store dropped mid-cascade releases every timer once")
    func cancelAndDropMidCascade() {
        let timers = Self.bucket(64, slot: 2, seed: 17)
        var store = Self.cascading(timers, budget: 8, slot: 2)
        // The unmoved ones are still in the wheel's cascade bucket; cancel everything, in any order.
        for timer in timers.reversed() {
            let removed = store.remove(timer)
            #expect(removed)
        }
        let ended = !store.isCascading
        #expect(ended && store.count == 0)
        // Dropped while cascading: the wheel releases what it still holds, once, skipping what moved
        // (the moved ones are released by the buckets and the heap they moved to).
        var held = Self.bucket(64, slot: 2, seed: 19)
        do { _ = Self.cascading(held, budget: 8, slot: 2) }
        var onlyOurs = 0
        for index in held.indices where isKnownUniquelyReferenced(&held[index]) { onlyOurs += 1 }
        #expect(onlyOurs == held.count, "\(held.count - onlyOurs) timers are still retained by a dropped store")
    }

    @Test("Shutdown during a cascade returns every pending timer once, none twice")
    func removeAllDuringACascade() {
        var store = Self.cascading(Self.bucket(300, slot: 2, seed: 9), budget: 16, slot: 2)
        let left = store.removeAll()
        #expect(left.count == 300 && Set(left.map(ObjectIdentifier.init)).count == 300)
        #expect(left.allSatisfy { $0.heapIndex == -1 } && store.count == 0 && !store.isCascading)
    }

    @Test("Moving the next bucket early while a cascade is under way finishes the cascade first: nothing it files is left a rotation late")
    func moveNextBucketFinishesTheCascade() {
        // The shared store itself (`moveSmallBuckets` never asks during a cascade; another caller may).
        var store = WheeledHeap<LoopTimer>(tickShift: DeadlineStore.tickShift, shrinksOnRemoval: false, cascadeBudget: 16)
        let later = (0..<3).map { LoopTimer(core: nil, deadline: 5 * Self.level1 + Int64($0), isWall: false, action: {}) }
        let timers = Self.bucket(200, slot: 2, seed: 23) + later
        var sequences: [ObjectIdentifier: UInt64] = [:]
        for (sequence, timer) in timers.enumerated() {
            sequences[ObjectIdentifier(timer)] = UInt64(sequence)
            store.insert(timer, sequence: UInt64(sequence))
        }
        var clock = 2 * Self.level1 - Self.tick
        store.advance(monotonicNow: clock)
        let began = store.wheel.isCascading
        #expect(began, "no cascade began")
        store.wheel.moveNextBucket(into: &store.heap)
        let ended = !store.wheel.isCascading
        #expect(ended)
        // Fired as a loop would: woken at the heap's first deadline or the wheel's next advance.
        var fired: [(timer: LoopTimer, lateness: Int64)] = []
        for _ in 0..<10_000 where store.count > 0 {
            clock = max(clock, min(store.heap.firstKey?.deadline ?? .max, store.nextAdvance))
            store.advance(monotonicNow: clock)
            while let first = store.heap.firstKey, first.deadline <= clock, let timer = store.heap.removeFirst() {
                fired.append((timer, clock - timer.deadline))
            }
        }
        let late = fired.filter { $0.lateness != 0 }
        #expect(late.isEmpty, "\(late.count) timers fired late, up to \(late.map(\.lateness).max() ?? 0) ns")
        let expected = timers.sorted {
            ($0.deadline, sequences[ObjectIdentifier($0)]!) < ($1.deadline, sequences[ObjectIdentifier($1)]!)
        }
        #expect(fired.map { ObjectIdentifier($0.timer) } == expected.map(ObjectIdentifier.init))
    }

    @Test("A big bucket begins moving one tick per chunk ahead of its range, so its chunks end before its first tick, a look at a time, however long each look takes")
    func bigBucketsBeginEarly() {
        // 2,000 timers in a level-2 bucket (4,096 ticks wide) moving 16 a look: 126 looks. Each
        // look costs the clock 20 µs, a loop iteration that fires timers in between.
        let level2 = 64 * Self.level1
        var random = SplitMix(seed: 29)
        let timers = (0..<2_000).map { _ in
            LoopTimer(core: nil, deadline: 3 * level2 + Int64(random.next() % UInt64(level2)), isWall: false, action: {})
        }
        var store = DeadlineStore(cascadeBudget: 16)
        for timer in timers { store.insert(timer) }
        var clock: Int64 = 0
        var began: Int64?
        var ended: Int64?
        for _ in 0..<10_000 where clock < 3 * level2 {
            let wake = store.nextWake(monotonicNow: clock, wallNow: 0)
            if store.isCascading, began == nil { began = clock }
            if !store.isCascading, began != nil, ended == nil { ended = clock }
            switch wake {
            case .arm(let nanoseconds): clock += nanoseconds
            case .runNow: clock += 20_000
            case .keep: clock = store.armedDeadline ?? clock
            }
            store.driverFired()
            if clock < 3 * level2 { #expect(store.popDue(monotonicNow: clock, limit: store.nextSequence) == nil) }
        }
        let begun = began ?? .max
        #expect(begun <= 3 * level2 - 100 * Self.tick, "the move began \((3 * level2 - begun) / Self.tick) ticks ahead")
        #expect((ended ?? .max) < 3 * level2, "the bucket's first tick came with part of it still to move")
        let deadlines = DeadlineStoreModelTests.deadlines(of: timers)
        let fired = DeadlineStoreModelTests.fireAll(&store, from: clock)
        #expect(fired.count == 2_000)
        DeadlineStoreModelTests.expectOnTime(fired, deadlines: deadlines, from: clock)
    }
}
