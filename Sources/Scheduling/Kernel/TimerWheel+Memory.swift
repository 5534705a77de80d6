// A quiet store's memory give-back, and the slot count the memory tests read.

extension TimerWheel {
    /// Slots allocated in the buckets and the working buffers, for the memory tests.
    @inlinable package var capacity: Int {
        buckets.reduce(0) { $0 + $1.capacity } + spareDeadlines.capacity + spareElements.capacity
    }

    /// Gives back the buffers of emptied buckets, and compacts buckets that shrank to a quarter of a
    /// capacity over `keeping` slots (dropping their holes, telling each entry its new position).
    /// Visits only buckets touched by a removal or a move since the last call, so a quiet loop that
    /// asks every iteration pays nothing for the rest.
    @inlinable package mutating func shrinkBuckets(keeping: Int) {
        if spareDeadlines.capacity > keeping { spareDeadlines = [] }
        if spareElements.capacity > keeping { spareElements = [] }
        for level in 0..<Self.levels {
            var bits = touched[level]
            touched[level] = 0
            while bits != 0 {
                let slot = bits.trailingZeroBitCount
                bits &= bits &- 1
                let index = level &* 64 &+ slot
                if index == cascade?.index {
                    // Positions there are the cascade's: left alone until it ends.
                    touched[level] |= 1 << UInt64(slot)
                    continue
                }
                let capacity = buckets[index].capacity
                let live = Int(bucketStates[index].live)
                if live == 0 {
                    if capacity > 0 { buckets[index] = [] }
                    continue
                }
                guard capacity > keeping, live < capacity / 4 else { continue }
                var smaller: [Element] = []
                smaller.reserveCapacity(live * 2)
                for element in buckets[index] where !element.isHole {
                    let position = smaller.count
                    element.reference._withUnsafeGuaranteedRef { $0.heapIndex = -(position + 2) }
                    smaller.append(element)
                }
                buckets[index] = smaller
                bucketStates[index].freeHead = -1
            }
        }
    }
}
