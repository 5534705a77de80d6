// The wheel's storage: 16-slot blocks of one shared array, chained per bucket, the free list
// every bucket takes from, and emptying it all (shutdown). Why blocks and not an array per bucket
// is in the type's notes (TimerWheel.swift).

extension TimerWheel {
    /// Puts a block at the head of bucket `index`'s chain: a free one, its slots made holes
    /// (they still hold what its last bucket left), or a new one at the end of ``slots``, whose
    /// slots are holes referring to `filler` (never retained nor dereferenced). Returns false,
    /// taking nothing, if positions would no longer fit the bucket state's 32 bits.
    @inlinable @inline(never)
    mutating func linkBlock(to index: Int, filler: Unmanaged<Entry>) -> Bool {
        let block: Int
        if freeBlock >= 0 {
            block = Int(freeBlock)
            freeBlock = blocks[block].next
            let base = block << Self.blockShift
            for position in base..<(base &+ Self.blockSize) { slots[position].sequence = Element.holeBit }
        } else {
            guard blocks.count < Int(Int32.max) >> Self.blockShift else { return false }
            block = blocks.count
            blocks.append(Block(next: -1, bucket: -1))
            slots.append(contentsOf: repeatElement(Element(filler, Element.holeBit), count: Self.blockSize))
            #if DEBUG
            filedDeadlines.append(contentsOf: repeatElement(0, count: Self.blockSize))
            #endif
        }
        blocks[block] = Block(next: bucketStates[index].head, bucket: Int32(truncatingIfNeeded: index))
        bucketStates[index].head = Int32(truncatingIfNeeded: block)
        return true
    }

    /// The position after the last slot handed out in bucket `index`, now handed out too: in its
    /// newest block, or in one linked for it when that is full (``linkBlock(to:filler:)``; nil if
    /// that fails).
    @inlinable @inline(__always)
    mutating func appendPosition(to index: Int, filler: Unmanaged<Entry>) -> Int? {
        let size = Int(bucketStates[index].size)
        if size & (Self.blockSize &- 1) == 0 {
            guard linkBlock(to: index, filler: filler) else { return nil }
        }
        bucketStates[index].size = Int32(truncatingIfNeeded: size &+ 1)
        return Int(bucketStates[index].head) << Self.blockShift | size & (Self.blockSize &- 1)
    }

    /// Gives `block` to the free list, most recent first: the next bucket to grow takes the block
    /// just left (still in cache).
    @inlinable @inline(__always)
    mutating func releaseBlock(_ block: Int) {
        blocks[block] = Block(next: freeBlock, bucket: -1)
        freeBlock = Int32(truncatingIfNeeded: block)
    }

    /// Gives every block of the chain that starts at `block` to the free list.
    @inlinable
    mutating func releaseChain(from block: Int32) {
        var chain = block
        while chain >= 0 {
            let next = blocks[Int(chain)].next
            releaseBlock(Int(chain))
            chain = next
        }
    }

    /// Files the entries of `block` (holes skipped) relative to `elapsed`, or into `heap`, and
    /// returns how many it moved; the block itself is left as it was, for the caller to release.
    /// Two passes: a bucket's entries lie scattered in memory (a bucket holds a range of
    /// deadlines, scheduled in any order), so reading each one is a cache miss, and loads that
    /// depend on nothing else overlap when the loop does nothing but load; filing each entry
    /// between them (appends, the heap) kept one miss in flight at a time.
    @inlinable @discardableResult
    mutating func refile(block: Int, into heap: inout IndexedHeap<Entry>) -> Int {
        let base = block << Self.blockShift
        var deadlines = InlineArray<16, Int64>(repeating: 0)
        assert(deadlines.count == Self.blockSize, "TimerWheel: refile's buffer is not a block")
        for offset in 0..<Self.blockSize where !slots[base &+ offset].isHole {
            deadlines[offset] = slots[base &+ offset].reference._withUnsafeGuaranteedRef { $0.deadline }
        }
        var moved = 0
        for offset in 0..<Self.blockSize {
            // Read again each time: an insert may grow `slots` (never this block, not yet free).
            let element = slots[base &+ offset]
            guard !element.isHole else { continue }
            moved &+= 1
            count -= 1
            element.reference._withUnsafeGuaranteedRef { $0.heapIndex = -1 }
            if !insert(element.reference, deadline: deadlines[offset], sequence: element.sequence) {
                heap.insert(retained: element.reference, deadline: deadlines[offset], sequence: element.sequence)
            }
        }
        return moved
    }

    /// Calls `body` with every entry the wheel holds (in the blocks of buckets and of a cascade,
    /// holes skipped), in no particular order.
    @inlinable
    func forEachHeld(_ body: (Element) -> Void) {
        for block in blocks.indices where blocks[block].bucket >= 0 {
            let base = block << Self.blockShift
            for position in base..<(base &+ Self.blockSize) where !slots[position].isHole {
                body(slots[position])
            }
        }
    }

    /// Removes every entry, leaving each one's `heapIndex` at -1, and frees the blocks.
    @inlinable package mutating func removeAll() -> [Entry] {
        var all: [Entry] = []
        all.reserveCapacity(count)
        forEachHeld { element in
            let entry = element.reference.takeRetainedValue()
            entry.heapIndex = -1
            all.append(entry)
        }
        slots = []
        #if DEBUG
        filedDeadlines = []
        #endif
        blocks = []
        freeBlock = -1
        for index in bucketStates.indices { bucketStates[index] = BucketState() }
        for level in 0..<Self.levels { occupied[level] = 0 }
        count = 0
        nextStart = .max
        cascade = nil
        return all
    }
}
