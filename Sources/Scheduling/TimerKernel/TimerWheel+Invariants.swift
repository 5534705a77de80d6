// What must hold of a wheel between any two of its operations, written out so that the model tests
// can check it after every step, and debug builds now and then where the stores stand still
// (`WheeledHeap.assertSound(mayAwaitRearm:sampler:)`: the loop's store before it arms its wake-up,
// the Dispatch timer queue under its lock after each change).

extension TimerWheel {
    /// The sequence number an entry was filed with, for the entry at `heapIndex` (`-(position+2)`).
    @inlinable package func sequence(atHeapIndex heapIndex: Int) -> UInt64 {
        slots[-heapIndex - 2].sequence
    }

    /// A lazy re-arm (``WheeledHeap/rearm(_:to:)``) moved the entry at `heapIndex` to `deadline`
    /// in place: debug builds raise the deadline it counts as filed by, never lower it (its live
    /// deadline may be an earlier one from another thread, which its owner files again). Nothing
    /// in release builds.
    @inlinable @inline(__always)
    package mutating func noteLaterDeadline(_ deadline: Int64, atHeapIndex heapIndex: Int) {
        #if DEBUG
        let position = -heapIndex - 2
        filedDeadlines[position] = Swift.max(filedDeadlines[position], deadline)
        #endif
    }

    /// Every broken invariant, described; empty when the wheel is sound. O(slots + buckets).
    ///
    /// `mayAwaitRearm` says of an entry whether its deadline may have been moved earlier in place
    /// by a re-arm that its owner has yet to file (the loop's one-shot timers: a re-arm from another
    /// thread writes the deadline, then queues the timer to the loop, which files it again). Such an
    /// entry is judged by the deadline it was filed by; any other by the earlier of that and its
    /// live deadline, so one whose deadline moved earlier with nothing to file it again is late.
    /// (Debug builds keep the filed deadlines; release builds judge by the live one.)
    ///
    /// 1. `count` is the number of live (non-hole) slots in the blocks owned by buckets (a cascade's
    ///    included), and each bucket's `live` is the number of its own.
    /// 2. A bucket's occupancy bit is set exactly when it holds an entry (a cascade's bucket: never;
    ///    it left the bitmap when its move began).
    /// 3. Each live slot's entry says where it is: `heapIndex == -(position + 2)`.
    /// 4. Never late: an entry waits in a bucket whose range starts no later than its judged
    ///    deadline's tick, after `elapsed`, at the level its tick's digits say relative to
    ///    `elapsed` — or, the one allowed lag, in an earlier bucket, when its deadline moved later
    ///    after it was filed (a lazy re-arm). A cascade's entries are due no earlier than its first
    ///    tick.
    /// 5. `nextStart` is no later than the first occupied bucket's start.
    /// 6. The blocks of each chain are owned by that bucket, and every free block by none.
    package func invariantViolations(mayAwaitRearm: (Entry) -> Bool = { _ in false }) -> [String] {
        var found: [String] = []
        var liveByBucket = Array(repeating: 0, count: bucketStates.count)
        var total = 0
        for block in blocks.indices where blocks[block].bucket >= 0 {
            let index = Int(blocks[block].bucket)
            let base = block << Self.blockShift
            for position in base..<(base &+ Self.blockSize) where !slots[position].isHole {
                total += 1
                liveByBucket[index] += 1
                let entry = slots[position].reference.takeUnretainedValue()
                if entry.heapIndex != -(position + 2) {
                    found.append("slot \(position): its entry says heapIndex \(entry.heapIndex)")
                }
                let deadline = judgedDeadline(entry, at: position, mayAwaitRearm: mayAwaitRearm)
                let when = deadline >> tickShift
                if let cascade, cascade.index == index {
                    if deadline < cascade.finishBy {
                        found.append("slot \(position): due at \(deadline), before its cascade's first tick: late")
                    }
                    continue
                }
                let (level, slot) = (index >> 6, index & 63)
                let first = start(level: level, slot: slot)
                if first > when {
                    found.append("slot \(position): due at tick \(when), bucket \(level)/\(slot) from \(first): late")
                }
                if when <= elapsed || first <= elapsed {
                    found.append("slot \(position): tick \(when), bucket start \(first), not after elapsed \(elapsed)")
                }
                if Self.level(elapsed, first) != level {
                    found.append("slot \(position): bucket \(level)/\(slot) is not at its level relative to elapsed \(elapsed)")
                }
            }
        }
        if total != count { found.append("count \(count), live slots \(total)") }
        for index in bucketStates.indices {
            let (level, slot) = (index >> 6, index & 63)
            let bit = occupied[level] & (1 << UInt64(slot)) != 0
            if Int(bucketStates[index].live) != liveByBucket[index] {
                found.append("bucket \(level)/\(slot): live \(bucketStates[index].live), holds \(liveByBucket[index])")
            }
            let isCascade = cascade?.index == index
            if bit != (liveByBucket[index] > 0 && !isCascade) {
                found.append("bucket \(level)/\(slot): occupancy bit \(bit), holds \(liveByBucket[index])")
            }
            var chain = bucketStates[index].head
            var steps = 0
            while chain >= 0, steps <= blocks.count {
                if Int(blocks[Int(chain)].bucket) != index {
                    found.append("bucket \(level)/\(slot): block \(chain) of its chain is owned by \(blocks[Int(chain)].bucket)")
                }
                chain = blocks[Int(chain)].next
                steps += 1
            }
        }
        var free = freeBlock
        var steps = 0
        while free >= 0, steps <= blocks.count {
            if blocks[Int(free)].bucket != -1 { found.append("free block \(free) is owned by \(blocks[Int(free)].bucket)") }
            free = blocks[Int(free)].next
            steps += 1
        }
        if cascade == nil, let next = nextOccupied(), nextStart > next.start {
            found.append("nextStart \(nextStart) after the first occupied bucket's start \(next.start)")
        }
        return found
    }

    /// The deadline the entry at `position` must not be filed later than (see
    /// ``invariantViolations(mayAwaitRearm:)``).
    func judgedDeadline(_ entry: Entry, at position: Int, mayAwaitRearm: (Entry) -> Bool) -> Int64 {
        #if DEBUG
        let filed = filedDeadlines[position]
        #else
        let filed = entry.deadline
        #endif
        return mayAwaitRearm(entry) ? filed : Swift.min(filed, entry.deadline)
    }
}
