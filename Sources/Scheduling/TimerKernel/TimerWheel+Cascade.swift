// A big wheel bucket moving down in chunks: the cascade's state and steps. The type's notes, and
// how `advance` and `move` start, continue and finish it, are in TimerWheel+Advance.swift.

extension TimerWheel {
    /// A bucket above level 0 moving down in chunks (``advance(now:into:continuesCascade:)`` with
    /// a ``cascadeBudget``), so that a bucket of thousands of timers does not stall its scheduler
    /// in one go: a 67 ms bucket holds 3,000 timers when 50 fire per millisecond.
    ///
    /// `elapsed` is at the bucket's first tick, so what it moves is filed relative to it, while
    /// the blocks not moved yet stay where they are, still owned by the bucket: an entry there
    /// keeps its position, and a cancel finds it by its block's owner (no insert can reach the
    /// bucket: entries filed at its level differ from `elapsed` in that digit, and it shares it).
    /// None of its entries is due before the bucket's first tick, the move's deadline
    /// (``finishBy``): a call from then on moves the rest at once, so every entry reaches the heap
    /// in time.
    @usableFromInline
    struct Cascade {
        /// The bucket's index in ``bucketStates``.
        @usableFromInline var index: Int
        /// The next block to move, or -1.
        @usableFromInline var block: Int32
        /// The bucket's first nanosecond.
        @usableFromInline var finishBy: Int64

        @inlinable init(index: Int, block: Int32, finishBy: Int64) {
            self.index = index
            self.block = block
            self.finishBy = finishBy
        }
    }

    /// A cancel of an entry the cascade has not moved yet: a hole in its place. The bucket's free
    /// list is not kept (nothing is inserted there); the cascade ends when its last entry went.
    @usableFromInline
    mutating func removeFromCascade(_ entry: Entry, at position: Int) {
        guard let index = cascade?.index else { return }
        let released = slots[position].reference
        slots[position].sequence = Element.holeBit
        entry.heapIndex = -1
        count -= 1
        bucketStates[index].live &-= 1
        if bucketStates[index].live == 0 { endCascade() }
        if count == 0 { nextStart = .max }
        released.release()
    }

    /// Moves the cascade's next blocks down, or to `heap`, relative to `elapsed`, until it visited
    /// `budget` slots (one block at least), releasing each block it emptied. Ends the cascade when
    /// no block or no entry is left.
    @inlinable
    mutating func continueCascade(into heap: inout IndexedHeap<Entry>, budget: Int) {
        guard var cascade else { return }
        let index = cascade.index
        var visited = 0
        repeat {
            let block = Int(cascade.block)
            cascade.block = blocks[block].next
            let moved = refile(block: block, into: &heap)
            bucketStates[index].live &-= Int32(truncatingIfNeeded: moved)
            releaseBlock(block)
            visited &+= Self.blockSize
        } while visited < budget && cascade.block >= 0 && bucketStates[index].live > 0
        self.cascade = cascade
        if cascade.block < 0 || bucketStates[index].live == 0 { endCascade() }
    }

    /// The cascade's bucket holds nothing live (holes, and what it moved): its blocks left go
    /// back and it starts over.
    @inlinable
    mutating func endCascade() {
        guard let cascade else { return }
        releaseChain(from: cascade.block)
        bucketStates[cascade.index] = BucketState()
        self.cascade = nil
    }
}

extension TimerWheel.Cascade: Sendable {}

extension TimerWheel {
    /// Ticks ahead of its first tick at which moving bucket `index` may begin: one, or for a bucket
    /// above level 0 that will move in chunks of ``cascadeBudget``, one per chunk (at most 4,096).
    /// Its chunks then run one per loop iteration and end long before its first tick, instead of
    /// leaving most of it to move at once then (a level-2 bucket holds every timer of a 4.3 s
    /// range: tens of thousands at a steady firing rate, more than one tick of chunks moves).
    /// Early is correct (the heap is precise): meanwhile a timer due before the bucket's first
    /// tick goes to the heap instead of a lower bucket. It applies once the bucket is the earliest
    /// occupied one, which under steady firing is often only a tick before (Docs/Performance.md,
    /// "The lateness tail").
    @inlinable @inline(__always)
    func cascadeLead(of index: Int) -> Int64 {
        // Level 0 (indices below 64) never cascades; nor does a bucket within the budget.
        let state = bucketStates[index]
        guard index >= Self.slotsPerLevel, Int(state.live) > cascadeBudget else { return 1 }
        return Int64(Swift.min(Int(state.size) / cascadeBudget + 1, 4_096))
    }

    /// Recomputes the earliest occupied bucket and its first tick, after a move.
    @inlinable
    mutating func updateNextStart() {
        guard let next = nextOccupied() else {
            nextStart = .max
            return
        }
        nextStart = next.start
        nextIndex = next.level &* 64 &+ next.slot
    }
}
