// A big wheel bucket moving down in chunks: the cascade's state and steps. The type's notes, and
// how `advance` and `move` start, continue and finish it, are in TimerWheel.swift.

extension TimerWheel {
    /// A bucket above level 0 moving down in chunks (``advance(now:into:budget:continuesCascade:)``
    /// with a budget), so that a bucket of thousands of timers does not stall its scheduler in one
    /// go: a 67 ms bucket holds 3,000 timers when 50 fire per millisecond.
    ///
    /// `elapsed` is at the bucket's first tick, so what it moves is filed relative to it, while
    /// the bucket's array stays where it is, unwritten (the cursor says what moved): an entry not
    /// moved yet keeps its position there, at or after the cursor, and a cancel looks there first
    /// (no insert can reach the bucket:
    /// entries filed at its level differ from `elapsed` in that digit, and it shares it). None of
    /// its entries is due before the bucket's first tick, the move's deadline (``finishBy``): a
    /// call from then on moves the rest at once, so every entry reaches the heap in time.
    @usableFromInline
    struct Cascade {
        /// The bucket's index in ``buckets``.
        @usableFromInline var index: Int
        /// The next position to move.
        @usableFromInline var cursor: Int
        /// The bucket's first nanosecond.
        @usableFromInline var finishBy: Int64

        @inlinable init(index: Int, cursor: Int, finishBy: Int64) {
            self.index = index
            self.cursor = cursor
            self.finishBy = finishBy
        }
    }

    /// The first position of bucket `index` whose entry the wheel still holds: a cascade's bucket
    /// moved the positions before its cursor on already.
    @inlinable @inline(__always)
    func firstHeld(in index: Int) -> Int {
        guard let cascade, cascade.index == index else { return 0 }
        return cascade.cursor
    }

    /// A cancel of an entry the cascade has not moved yet: a hole in its place. The bucket's free
    /// list is not kept (nothing is inserted there); the cascade ends when its last entry went.
    @usableFromInline
    mutating func removeFromCascade(_ entry: Entry, at position: Int, in index: Int) {
        let released = buckets[index][position].reference
        buckets[index][position].sequence = Element.holeBit
        entry.heapIndex = -1
        count -= 1
        bucketStates[index].live &-= 1
        if bucketStates[index].live == 0 { endCascade() }
        if count == 0 { nextStart = .max }
        released.release()
    }

    /// Moves the cascade's next `budget` positions (entries and holes) down, or to `heap`, relative
    /// to `elapsed`, and the cursor past them. Ends the cascade when it reached the bucket's end.
    @inlinable
    mutating func continueCascade(into heap: inout IndexedHeap<Entry>, budget: Int) {
        guard var cascade else { return }
        let index = cascade.index
        let end = buckets[index].count
        let stop = budget >= end &- cascade.cursor ? end : cascade.cursor &+ budget
        let first = cascade.cursor
        // The chunk is copied out of the bucket first, so the loop reads a buffer of its own while
        // `insert` appends to other buckets; into kept buffers, for the reason at `spareDeadlines`.
        var chunk: [Element] = []
        swap(&chunk, &spareElements)
        chunk.removeAll(keepingCapacity: true)
        chunk.append(contentsOf: buckets[index][first..<stop])
        let moved = chunk.reduce(0) { $0 + ($1.isHole ? 0 : 1) }
        bucketStates[index].live &-= Int32(truncatingIfNeeded: moved)
        count -= moved
        refile(chunk, into: &heap)
        swap(&chunk, &spareElements)
        cascade.cursor = stop
        if stop == end || bucketStates[index].live == 0 {
            endCascade()
        } else {
            self.cascade = cascade
        }
    }

    /// The cascade's bucket holds nothing live (holes, and what it moved): it starts over, keeping
    /// its buffer for its next round.
    @inlinable
    mutating func endCascade() {
        guard let cascade else { return }
        buckets[cascade.index].removeAll(keepingCapacity: true)
        bucketStates[cascade.index] = BucketState()
        self.cascade = nil
    }
}

extension TimerWheel.Cascade: Sendable {}
