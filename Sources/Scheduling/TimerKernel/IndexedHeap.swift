/// An entry of an ``IndexedHeap``: told its slot, so it can be removed in O(log n) without a
/// search. Its sequence number lives in the heap's node only (``IndexedHeap/insert(_:sequence:)``),
/// which keeps a small entry small.
@usableFromInline
package protocol HeapSlotEntry: AnyObject {
    /// When the entry is due. Must not change while the entry is in a heap.
    var deadline: Int64 { get }
    /// The entry's slot in the heap, or -1 when it is not in one. Only the heap writes it.
    var heapIndex: Int { get set }
}

/// A heap entry that carries its own sequence number, for ``IndexedHeap/insert(_:)``.
@usableFromInline
package protocol IndexedHeapEntry: HeapSlotEntry {
    /// Ties between equal deadlines break by this, in increasing order (scheduling order).
    var sequence: UInt64 { get }
}

/// A 4-ary min-heap of class entries ordered by `(deadline, sequence)`, each entry knowing its
/// slot (libuv's `heap-inl.h` and NIO's `PriorityQueue` order the same way: a plain heap is not
/// stable, the sequence makes it so).
///
/// The keys are copied into the heap's own array next to the entry reference, so sifting compares
/// contiguous memory and never dereferences an entry: with a million timers scattered over the
/// allocator, a pointer-chasing heap spends most of its time in cache misses (measured: 60% of the
/// loop thread in one load). Four children per node halve the depth and sit in one or two cache
/// lines; only the slot write-back touches the entry. The heap owns one retain of each entry, taken
/// on insert and given back on removal, and writes slots through that reference without touching
/// the reference count (a retain there was an atomic on a cold cache line: half the loop's time).
///
/// The heap is not copyable: a copy would share the retained references, and the two would each
/// give them back. Dropping a heap releases what it still holds (owners empty it with
/// `removeAll()` on shutdown, to dispose of the entries first).
///
/// - Complexity: `insert`, `removeFirst` and `remove(_:)` are O(log n); `first` is O(1).
@usableFromInline
package struct IndexedHeap<Entry: HeapSlotEntry>: ~Copyable {
    @usableFromInline
    package struct Node {
        @usableFromInline var deadline: Int64
        @usableFromInline var sequence: UInt64
        /// Retained by the heap while the node is in it.
        @usableFromInline var reference: Unmanaged<Entry>

        @inlinable init(_ entry: Entry, sequence: UInt64) {
            deadline = entry.deadline
            self.sequence = sequence
            reference = Unmanaged.passRetained(entry)
        }

        /// A node for an entry whose retain the caller hands over.
        @inlinable init(retained reference: Unmanaged<Entry>, deadline: Int64, sequence: UInt64) {
            self.deadline = deadline
            self.sequence = sequence
            self.reference = reference
        }

        @inlinable var entry: Entry { reference.takeUnretainedValue() }

        /// Writes the entry's slot without retaining it: the heap's own retain keeps it alive.
        @inlinable @inline(__always)
        func setSlot(_ index: Int) {
            reference._withUnsafeGuaranteedRef { $0.heapIndex = index }
        }
    }

    @usableFromInline package var storage: [Node] = []
    /// Whether removals give memory back by themselves (see ``shrinkIfSparse()``).
    @usableFromInline let shrinksOnRemoval: Bool

    /// Makes an empty heap. With `shrinksOnRemoval` false the owner calls ``shrinkIfSparse()`` at a
    /// moment of its choosing.
    @inlinable package init(shrinksOnRemoval: Bool = true) {
        self.shrinksOnRemoval = shrinksOnRemoval
    }

    @inlinable deinit {
        for node in storage {
            node.setSlot(-1)
            node.reference.release()
        }
    }

    @inlinable package var count: Int { storage.count }
    @inlinable package var isEmpty: Bool { storage.isEmpty }
    @inlinable package var first: Entry? { storage.first?.entry }

    /// The first entry's key, read from the heap's own array (no entry dereference).
    @inlinable package var firstKey: (deadline: Int64, sequence: UInt64)? {
        guard let node = storage.first else { return nil }
        return (node.deadline, node.sequence)
    }

    @inlinable @inline(__always)
    static func less(_ a: Node, _ b: Node) -> Bool {
        a.deadline < b.deadline || (a.deadline == b.deadline && a.sequence < b.sequence)
    }

    /// Inserts `entry`, ordered by its deadline and then by `sequence`.
    @inlinable package mutating func insert(_ entry: Entry, sequence: UInt64) {
        precondition(
            entry.heapIndex < 0,
            "IndexedHeap.insert: the entry is already in a heap (slot \(entry.heapIndex))"
        )
        storage.append(Node(entry, sequence: sequence))
        siftUp(storage.count - 1)
        checkInvariants()
    }

    /// Inserts an entry whose +1 retain the caller hands over (a timer moving in from a
    /// ``TimerWheel``, with no retain and release on the way), due at `deadline`, which must be its
    /// ``HeapSlotEntry/deadline``.
    @inlinable package mutating func insert(retained reference: Unmanaged<Entry>, deadline: Int64, sequence: UInt64) {
        storage.append(Node(retained: reference, deadline: deadline, sequence: sequence))
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
        guard index >= 0, index < storage.count,
            storage[index].reference.toOpaque() == Unmanaged.passUnretained(entry).toOpaque()
        else { return }
        remove(at: index)
    }

    /// Removes `entry` if it is in this heap and returns the sequence it was inserted with (for an
    /// owner that files it again in the same place among equal deadlines); nil otherwise.
    @inlinable package mutating func take(_ entry: Entry) -> UInt64? {
        let index = entry.heapIndex
        guard index >= 0, index < storage.count,
            storage[index].reference.toOpaque() == Unmanaged.passUnretained(entry).toOpaque()
        else { return nil }
        let sequence = storage[index].sequence
        remove(at: index)
        return sequence
    }

    @inlinable @discardableResult
    mutating func remove(at index: Int) -> Entry {
        let last = storage.count - 1
        if index != last { storage.swapAt(index, last) }
        let removed = storage.removeLast().reference.takeRetainedValue()
        removed.heapIndex = -1
        if index < storage.count {
            // The node moved into the hole may belong above it or below it.
            if index > 0 && Self.less(storage[index], storage[(index - 1) / 4]) {
                siftUp(index)
            } else {
                siftDown(index)
            }
        }
        if shrinksOnRemoval { shrinkIfSparse() }
        checkInvariants()
        return removed
    }

    /// Removes every entry, leaving each one's slot at -1.
    @inlinable package mutating func removeAll() -> [Entry] {
        let all = storage.map { $0.reference.takeRetainedValue() }
        storage = []
        for entry in all { entry.heapIndex = -1 }
        return all
    }

    /// Gives memory back when the heap has shrunk to a quarter of its capacity, so a burst of a
    /// million cancelled timers does not pin their slots. A capacity of at most `minimumCapacity`
    /// slots is kept: shrinking it would only trade a little memory for reallocations.
    ///
    /// Freeing a large array makes glibc consolidate every small chunk freed since (the timers that
    /// just fired or were cancelled): measured at several milliseconds after a burst, long enough
    /// to make due timers late. Owners with latency to keep choose when to call it.
    @inlinable package mutating func shrinkIfSparse(minimumCapacity: Int = 1024) {
        let capacity = storage.capacity
        guard capacity > minimumCapacity, storage.count < capacity / 4 else { return }
        // `Array(storage)` would share the buffer; a fresh one with room to grow is what frees it.
        var smaller: [Node] = []
        smaller.reserveCapacity(storage.count * 2)
        smaller.append(contentsOf: storage)
        storage = smaller
    }

    @inlinable mutating func siftUp(_ start: Int) {
        var index = start
        while index > 0 {
            let parent = (index - 1) / 4
            guard Self.less(storage[index], storage[parent]) else { break }
            storage.swapAt(index, parent)
            storage[index].setSlot(index)
            index = parent
        }
        storage[index].setSlot(index)
    }

    @inlinable mutating func siftDown(_ start: Int) {
        var index = start
        let count = storage.count
        while true {
            let firstChild = 4 * index + 1
            guard firstChild < count else { break }
            var smallest = firstChild
            var child = firstChild + 1
            let end = Swift.min(firstChild + 4, count)
            while child < end {
                if Self.less(storage[child], storage[smallest]) { smallest = child }
                child += 1
            }
            guard Self.less(storage[smallest], storage[index]) else { break }
            storage.swapAt(index, smallest)
            storage[index].setSlot(index)
            index = smallest
        }
        storage[index].setSlot(index)
    }

    /// Debug builds check the heap order and every entry's slot after each mutation (the keys are
    /// what orders the heap; ``invariantViolations(mayAwaitRearm:)`` also compares them with the
    /// entries' deadlines).
    @inlinable func checkInvariants() {
        #if DEBUG
        guard storage.count <= 64 else { return }  // O(n): checked on small heaps, where tests live
        for (index, node) in storage.enumerated() {
            assert(
                node.entry.heapIndex == index,
                "IndexedHeap: entry at slot \(index) thinks it is at \(node.entry.heapIndex)"
            )
            // An entry's own deadline may differ from its key: a re-arm on another thread writes
            // it in place (the loop's timers), and the owner reads it again when it pops the entry.
            if index > 0 {
                assert(
                    !Self.less(node, storage[(index - 1) / 4]),
                    "IndexedHeap: slot \(index) orders before its parent"
                )
            }
        }
        #endif
    }
}

extension IndexedHeap {
    /// Every broken invariant of the heap, described; empty when it is sound. O(n).
    ///
    /// Each entry says where it is, and no node orders before its parent. The keys order the heap;
    /// an entry's own deadline may be later than its key (a re-arm on another thread wrote it in
    /// place: its owner finds it not due when it pops it, and files it again), never earlier, unless
    /// `mayAwaitRearm` says that a re-arm its owner has yet to file may have moved it earlier:
    /// otherwise the entry would be popped after its deadline, late.
    package func invariantViolations(mayAwaitRearm: (Entry) -> Bool = { _ in false }) -> [String] {
        var found: [String] = []
        for (index, node) in storage.enumerated() {
            let entry = node.entry
            if entry.heapIndex != index { found.append("heap slot \(index): its entry says \(entry.heapIndex)") }
            if node.deadline > entry.deadline && !mayAwaitRearm(entry) {
                found.append("heap slot \(index): key \(node.deadline), after its deadline \(entry.deadline): late")
            }
            if index > 0, Self.less(node, storage[(index - 1) / 4]) {
                found.append("heap slot \(index) orders before its parent")
            }
        }
        return found
    }
}

extension IndexedHeap where Entry: HeapSlotEntry {
    /// The smallest deadline among the entries other than the first: every one of them is at least
    /// this late, which is what lets a timer driver delay a wake-up by the first entry's leeway
    /// without making any other entry late. Nil when there is at most one entry.
    @inlinable package var secondDeadline: Int64? {
        guard storage.count > 1 else { return nil }
        var smallest = storage[1].deadline
        for index in 2..<Swift.min(5, storage.count) { smallest = Swift.min(smallest, storage[index].deadline) }
        return smallest
    }
}

extension IndexedHeap where Entry: IndexedHeapEntry {
    /// Inserts `entry`, ordered by `(deadline, sequence)`.
    @inlinable package mutating func insert(_ entry: Entry) {
        insert(entry, sequence: entry.sequence)
    }
}

extension IndexedHeap: Sendable where Entry: Sendable {}
extension IndexedHeap.Node: Sendable where Entry: Sendable {}
