import Scheduling
import Testing

@testable import LoopEngine
@testable import LoopScheduling

/// The wheel in front of the heap, case by case: full level-0 buckets, far cancels and `Int64`
/// limits, which buckets move before the loop blocks, holes, compaction and the memory of its
/// blocks. The random scripts (`DeadlineStoreModelTests`) cover the same paths in mixes.
@Suite("Loop timer store: the wheel's buckets and blocks")
struct DeadlineStoreWheelTests {
    @Test("A full level-0 bucket sends the rest to the heap: cancels find both, holes take new timers, all fire in (deadline, sequence) order")
    func fullLevelZeroBucket() {
        let tick = Int64(1) << DeadlineStore.tickShift
        let full = TimerWheel<LoopTimer>.levelZeroCapacity
        var store = DeadlineStore()
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
        // Blocks, not the array's capacity: that follows the allocator's rounding of its buffer.
        let blocks = store.wheel.blockCount
        #expect(blocks * TimerWheel<LoopTimer>.blockSize <= full, "a level-0 bucket took \(blocks) blocks")
        let deadlines = DeadlineStoreModelTests.deadlines(of: timers)
        let fired = DeadlineStoreModelTests.fireAll(&store, from: 0)
        DeadlineStoreModelTests.expectOnTime(fired, deadlines: deadlines, from: 0)
        let expected = timers.sorted {
            ($0.deadline, sequences[ObjectIdentifier($0)]!) < ($1.deadline, sequences[ObjectIdentifier($1)]!)
        }
        #expect(fired.map { ObjectIdentifier($0.timer) } == expected.map(ObjectIdentifier.init))
    }

    @Test("A timer far away is cancelled from the wheel without touching the heap; Int64 limits stay in the heap")
    func farCancelAndLimits() {
        var store = DeadlineStore()
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
        var store = DeadlineStore()
        store.insert(LoopTimer(core: nil, deadline: 10_000_000, isWall: false, action: {}))
        #expect(store.wheel.count == 1)
        let lone = store.nextWake(monotonicNow: 0, wallNow: 0)
        #expect(lone == .arm(in: 10_000_000))
        #expect(store.wheel.count == 0 && store.monotonic.heap.count == 1)
        // A level-0 bucket holds at most `levelZeroCapacity` (fewer than `smallBucket`): the one
        // past it is in the heap already, and the bucket joins it before the loop blocks.
        let full = TimerWheel<LoopTimer>.levelZeroCapacity
        #expect(full <= DeadlineStore.smallBucket)
        var level0 = DeadlineStore()
        for _ in 0...full { level0.insert(LoopTimer(core: nil, deadline: 10_000_000, isWall: false, action: {})) }
        #expect(level0.wheel.count == full && level0.monotonic.heap.count == 1)
        let once = level0.nextWake(monotonicNow: 0, wallNow: 0)
        #expect(once == .arm(in: 10_000_000))
        #expect(level0.wheel.count == 0)
        // A level-1 bucket (100 ms: tick 95) of more than `smallBucket` waits for its move.
        let tick = Int64(1) << DeadlineStore.tickShift
        var busy = DeadlineStore()
        for _ in 0...DeadlineStore.smallBucket { busy.insert(LoopTimer(core: nil, deadline: 100_000_000, isWall: false, action: {})) }
        let early = busy.nextWake(monotonicNow: 0, wallNow: 0)
        #expect(early == .arm(in: 63 * tick))
        #expect(busy.wheel.count == DeadlineStore.smallBucket + 1)
        _ = store.removeAll()
        _ = level0.removeAll()
        _ = busy.removeAll()
    }

    @Test("Emptied wheel buckets give their memory back when the store is quiet")
    func wheelMemory() {
        var store = DeadlineStore()
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
        var store = DeadlineStore()
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
        let deadlines = DeadlineStoreModelTests.deadlines(of: live)
        let popped = DeadlineStoreModelTests.fireAll(&store, from: 0)
        DeadlineStoreModelTests.expectOnTime(popped, deadlines: deadlines, from: 0)
        let fired = popped.map(\.timer)
        let expected = live.sorted {
            ($0.deadline, sequenceOf[ObjectIdentifier($0)]!) < ($1.deadline, sequenceOf[ObjectIdentifier($1)]!)
        }
        #expect(fired.map(ObjectIdentifier.init) == expected.map(ObjectIdentifier.init))
    }

    @Test("Buckets take each other's emptied blocks: refilling a far bucket and moving it down to the heap never grow the wheel past its peak and one block per bucket filled")
    func bucketsShareBlocks() {
        let tick = Int64(1) << DeadlineStore.tickShift
        // A level-2 slot: 4,096 ticks (4.3 s).
        let level2 = 4_096 * tick
        let size = Int64(TimerWheel<LoopTimer>.blockSize)
        var random = SplitMix(seed: 9)
        func bucket(_ slot: Int64) -> [LoopTimer] {
            (0..<1_000).map { _ in
                LoopTimer(core: nil, deadline: slot * level2 + Int64(random.next() % UInt64(level2)), isWall: false, action: {})
            }
        }
        var store = DeadlineStore()
        let first = bucket(8)
        for timer in first { store.insert(timer) }
        let peak = store.wheel.blockCount
        #expect(store.wheel.count == 1_000 && Int64(peak) == (1_000 + size - 1) / size)
        // Emptied by cancels (no quiet give-back in between), then another bucket filled as much.
        for timer in first { store.remove(timer) }
        #expect(store.wheel.count == 0 && store.wheel.blockCount == peak)
        let second = bucket(10)
        var sequences: [ObjectIdentifier: UInt64] = [:]
        for timer in second {
            sequences[ObjectIdentifier(timer)] = store.nextSequence
            store.insert(timer)
        }
        #expect(store.wheel.blockCount == peak, "a bucket grew the wheel instead of taking freed blocks")
        // The bucket moves down (in chunks) into up to 64 level-1 buckets, one tick before its
        // range: each of those may start a block of its own, nothing more.
        let now = 10 * level2 - tick
        var looks = 0
        repeat {
            _ = store.nextWake(monotonicNow: now, wallNow: 0)
            looks += 1
        } while store.isCascading && looks < 1_000
        #expect(looks > 1, "the bucket moved in one go: the chunks were not tested")
        #expect(store.count == 1_000 && store.wheel.count > 900)
        #expect(store.wheel.blockCount <= peak + 64)
        // Down to level 0 (at most `levelZeroCapacity` a bucket, the rest to the heap) and fired.
        let grown = store.wheel.blockCount
        let deadlines = DeadlineStoreModelTests.deadlines(of: second)
        let fired = DeadlineStoreModelTests.fireAll(&store, from: now)
        #expect(store.wheel.blockCount == grown, "moving down to level 0 grew the wheel")
        DeadlineStoreModelTests.expectOnTime(fired, deadlines: deadlines, from: now)
        let expected = second.sorted {
            ($0.deadline, sequences[ObjectIdentifier($0)]!) < ($1.deadline, sequences[ObjectIdentifier($1)]!)
        }
        #expect(fired.map { ObjectIdentifier($0.timer) } == expected.map(ObjectIdentifier.init))
    }
}
