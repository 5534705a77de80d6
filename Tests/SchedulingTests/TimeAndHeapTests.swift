import Foundation
import Scheduling
import Testing

@Suite("Saturating time")
struct TimeTests {
    @Test("Durations convert to nanoseconds, saturating and rounding up")
    func durations() {
        #expect(Nanoseconds.of(.seconds(1)) == 1_000_000_000)
        #expect(Nanoseconds.of(.seconds(Int64.max)) == .max)
        #expect(Nanoseconds.of(.seconds(Int64.min)) == .min)
        #expect(Nanoseconds.of(.nanoseconds(-5)) == -5)
        #expect(Nanoseconds.of(Duration(secondsComponent: 0, attosecondsComponent: 1)) == 1, "rounds up")
    }

    @Test("Sums, differences and products saturate instead of trapping")
    func arithmetic() {
        #expect(Nanoseconds.adding(.max, 1) == .max)
        #expect(Nanoseconds.adding(.min, -1) == .min)
        #expect(Nanoseconds.subtracting(.min, 1) == .min)
        #expect(Nanoseconds.subtracting(.max, -1) == .max)
        #expect(Nanoseconds.multiplying(.max, 2) == .max)
        #expect(Nanoseconds.multiplying(.max, -2) == .min)
    }

    @Test("Dates convert to nanoseconds since 1970, saturating")
    func dates() {
        #expect(Nanoseconds.sinceEpoch(Date(timeIntervalSince1970: 1)) == 1_000_000_000)
        #expect(Nanoseconds.sinceEpoch(.distantFuture) == .max)
        #expect(Nanoseconds.sinceEpoch(.distantPast) == .min)
        #expect(Nanoseconds.sinceEpoch(Date(timeIntervalSince1970: 1e300)) == .max)
    }
}

private final class Item: IndexedHeapEntry {
    let deadline: Int64
    let sequence: UInt64
    var heapIndex = -1
    init(_ deadline: Int64, _ sequence: UInt64) {
        self.deadline = deadline
        self.sequence = sequence
    }
}

@Suite("IndexedHeap")
struct IndexedHeapTests {
    @Test("Random inserts and removals pop in (deadline, sequence) order", arguments: [1, 2, 3, 4, 5])
    func randomAgainstModel(seed: UInt64) {
        var generator = SplitMix(seed: seed)
        var heap = IndexedHeap<Item>()
        var model: [Item] = []
        var sequence: UInt64 = 0
        for _ in 0..<5000 {
            switch generator.next() % 4 {
            case 0, 1:
                let item = Item(Int64(generator.next() % 50), sequence)
                sequence += 1
                heap.insert(item)
                model.append(item)
            case 2 where !model.isEmpty:
                let victim = model.remove(at: Int(generator.next() % UInt64(model.count)))
                heap.remove(victim)
                #expect(victim.heapIndex == -1)
            default:
                let expected = model.min { ($0.deadline, $0.sequence) < ($1.deadline, $1.sequence) }
                let popped = heap.removeFirst()
                #expect(popped === expected)
                if let expected { model.removeAll { $0 === expected } }
            }
            #expect(heap.count == model.count)
        }
    }
}
