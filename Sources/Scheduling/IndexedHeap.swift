/// An entry of an ``IndexedHeap``: ordered by `(deadline, sequence)` and told its slot, so it can
/// be removed in O(log n) without a search.
@usableFromInline
package protocol IndexedHeapEntry: AnyObject {
    /// When the entry is due.
    var deadline: Int64 { get }
    /// Ties between equal deadlines break by this, in increasing order (scheduling order).
    var sequence: UInt64 { get }
    /// The entry's slot in the heap, or -1 when it is not in one. Only the heap writes it.
    var heapIndex: Int { get set }
}

/// A binary min-heap of class entries ordered by `(deadline, sequence)`, each entry knowing its
/// slot (libuv's `heap-inl.h` and NIO's `PriorityQueue` order the same way: a plain heap is not
/// stable, the sequence makes it so).
///
/// - Complexity: `insert`, `removeFirst` and `remove(_:)` are O(log n); `first` is O(1).
@usableFromInline
package struct IndexedHeap<Entry: IndexedHeapEntry> {
    @usableFromInline package var storage: [Entry] = []

    @inlinable package init() {}

    @inlinable package var count: Int { storage.count }
    @inlinable package var isEmpty: Bool { storage.isEmpty }
    @inlinable package var first: Entry? { storage.first }

    @inlinable @inline(__always)
    static func less(_ a: Entry, _ b: Entry) -> Bool {
        a.deadline < b.deadline || (a.deadline == b.deadline && a.sequence < b.sequence)
    }

    @inlinable package mutating func insert(_ entry: Entry) {
        precondition(entry.heapIndex < 0, "IndexedHeap.insert: the entry is already in a heap (slot \(entry.heapIndex))")
        storage.append(entry)
        entry.heapIndex = storage.count - 1
        siftUp(storage.count - 1)
        checkInvariants()
    }

    @inlinable @discardableResult
    package mutating func removeFirst() -> Entry? {
        guard !storage.isEmpty else { return nil }
        return remove(at: 0)
    }

    /// Removes `entry` if it is in this heap; does nothing otherwise.
    @inlinable package mutating func remove(_ entry: Entry) {
        let index = entry.heapIndex
        guard index >= 0, index < storage.count, storage[index] === entry else { return }
        remove(at: index)
    }

    @inlinable @discardableResult
    mutating func remove(at index: Int) -> Entry {
        let last = storage.count - 1
        if index != last { storage.swapAt(index, last) }
        let removed = storage.removeLast()
        removed.heapIndex = -1
        if index < storage.count {
            storage[index].heapIndex = index
            siftDown(index)
            siftUp(index)
        }
        shrinkIfSparse()
        checkInvariants()
        return removed
    }

    /// Removes every entry, leaving each one's slot at -1.
    @inlinable package mutating func removeAll() -> [Entry] {
        let all = storage
        storage = []
        for entry in all { entry.heapIndex = -1 }
        return all
    }

    /// Gives memory back when the heap has shrunk to a quarter of its capacity, so a burst of a
    /// million cancelled timers does not pin their slots.
    @inlinable mutating func shrinkIfSparse() {
        let capacity = storage.capacity
        if capacity > 1024, storage.count < capacity / 4 {
            storage = Array(storage)
        }
    }

    @inlinable mutating func siftUp(_ start: Int) {
        var index = start
        while index > 0 {
            let parent = (index - 1) / 2
            guard Self.less(storage[index], storage[parent]) else { break }
            storage.swapAt(index, parent)
            storage[index].heapIndex = index
            storage[parent].heapIndex = parent
            index = parent
        }
    }

    @inlinable mutating func siftDown(_ start: Int) {
        var index = start
        let count = storage.count
        while true {
            let left = 2 * index + 1
            guard left < count else { break }
            let right = left + 1
            let child = right < count && Self.less(storage[right], storage[left]) ? right : left
            guard Self.less(storage[child], storage[index]) else { break }
            storage.swapAt(index, child)
            storage[index].heapIndex = index
            storage[child].heapIndex = child
            index = child
        }
    }

    /// Debug builds check the heap order and every entry's slot after each mutation.
    @inlinable func checkInvariants() {
        #if DEBUG
        guard storage.count <= 64 else { return }  // O(n): checked on small heaps, where tests live
        for (index, entry) in storage.enumerated() {
            assert(entry.heapIndex == index, "IndexedHeap: entry at slot \(index) thinks it is at \(entry.heapIndex)")
            if index > 0 {
                let parent = storage[(index - 1) / 2]
                assert(!Self.less(entry, parent), "IndexedHeap: slot \(index) orders before its parent")
            }
        }
        #endif
    }
}

extension IndexedHeap {
    /// The smallest deadline among the entries other than the first: every one of them is at least
    /// this late, which is what lets a timer driver delay a wake-up by the first entry's leeway
    /// without making any other entry late. Nil when there is at most one entry.
    @inlinable package var secondDeadline: Int64? {
        switch storage.count {
        case 0, 1: nil
        case 2: storage[1].deadline
        default: min(storage[1].deadline, storage[2].deadline)
        }
    }
}

extension IndexedHeap: Sendable where Entry: Sendable {}
