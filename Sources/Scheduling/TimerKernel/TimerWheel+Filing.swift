// Filing an entry in its bucket and taking it out again: O(1) each. Which bucket an entry goes to,
// and why a cancel leaves a hole, is in the type's notes (TimerWheel.swift).

extension TimerWheel {
    /// Files `reference` (a +1 retain the wheel keeps) if its deadline lies beyond the tick already
    /// handed to the heap and within the wheel, and its bucket has room (only a level-0 bucket can
    /// be full: ``levelZeroCapacity``). Returns false, keeping nothing, otherwise: the caller puts
    /// it in the heap.
    @inlinable @inline(__always)
    package mutating func insert(_ reference: Unmanaged<Entry>, deadline: Int64, sequence: UInt64) -> Bool {
        let when = deadline >> tickShift
        guard when > elapsed, deadline != .max else { return false }
        let (level, slot) = bucket(of: when)
        guard level < Self.levels else { return false }
        let index = level &* 64 &+ slot
        let position: Int
        let hole = Int(bucketStates[index].freeHead)
        if hole >= 0 {
            let next = slots[hole].sequence & ~Element.holeBit
            bucketStates[index].freeHead = Int32(truncatingIfNeeded: Int64(next) - 1)
            position = hole
        } else {
            // A full level-0 bucket leaves the rest to the heap (see `levelZeroCapacity`).
            if level == 0 && Int(bucketStates[index].size) >= Self.levelZeroCapacity { return false }
            guard let end = appendPosition(to: index, filler: reference) else { return false }
            position = end
        }
        slots[position] = Element(reference, sequence)
        #if DEBUG
        filedDeadlines[position] = deadline
        #endif
        reference._withUnsafeGuaranteedRef { $0.heapIndex = -(position + 2) }
        bucketStates[index].live &+= 1
        occupied[level] |= 1 << UInt64(slot)
        count += 1
        let first = start(level: level, slot: slot)
        if first < nextStart {
            nextStart = first
            nextIndex = index
        }
        return true
    }

    /// Removes `entry` if it is in the wheel, releasing the wheel's retain. Returns false if not.
    @inlinable @discardableResult
    package mutating func remove(_ entry: Entry) -> Bool {
        let encoded = entry.heapIndex
        guard encoded <= -2 else { return false }
        let position = -encoded - 2
        guard holds(entry, at: position) else { return false }
        // The bucket is the block's owner, not recomputed from the deadline: a re-armed entry's
        // deadline may have moved later (see `WheeledHeap.rearm`), and a cascade's blocks keep
        // their owner until moved.
        let index = Int(blocks[position >> Self.blockShift].bucket)
        if let cascade, index == cascade.index {
            removeFromCascade(entry, at: position)
            return true
        }
        let (level, slot) = (index >> 6, index & 63)
        let released = slots[position].reference
        entry.heapIndex = -1
        count -= 1
        // An empty wheel asks for no wake-up (a cancel-heavy loop would otherwise wake at the
        // boundary of a bucket it emptied).
        if count == 0 { nextStart = .max }
        bucketStates[index].live &-= 1
        if bucketStates[index].live == 0 {
            // Nothing left but holes: the bucket's blocks go back for any bucket to take.
            releaseChain(from: bucketStates[index].head)
            bucketStates[index] = BucketState()
            occupied[level] &= ~(1 << UInt64(slot))
        } else {
            let next = UInt64(Int64(bucketStates[index].freeHead) + 1)
            slots[position].sequence = Element.holeBit | next
            bucketStates[index].freeHead = Int32(truncatingIfNeeded: position)
        }
        released.release()
        return true
    }

    /// Whether the slot at `position` holds `entry` (not a hole, nor a position past the end).
    @inlinable @inline(__always)
    func holds(_ entry: Entry, at position: Int) -> Bool {
        position < slots.count && !slots[position].isHole
            && slots[position].reference.toOpaque() == Unmanaged.passUnretained(entry).toOpaque()
    }
}
