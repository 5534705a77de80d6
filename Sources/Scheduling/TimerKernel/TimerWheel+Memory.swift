// A quiet store's memory give-back, and the slot count the memory tests read.

extension TimerWheel {
    /// Slots allocated for the blocks, for the memory tests.
    @inlinable package var capacity: Int { slots.capacity }
    /// Blocks cut from the shared array so far, free ones included, for the memory tests.
    @inlinable package var blockCount: Int { blocks.count }

    /// Gives the blocks back when the wheel is empty, and compacts them past `keeping` slots when
    /// fewer than a quarter hold an entry (dropping holes and free blocks, telling each entry its
    /// new position). O(1) when there is nothing to give back, so a quiet loop may ask every
    /// iteration. Not while a cascade is under way: its positions are the cascade's until it ends.
    @inlinable package mutating func shrinkBuckets(keeping: Int) {
        guard cascade == nil else { return }
        if count == 0 {
            if slots.capacity > 0 {
                slots = []
                #if DEBUG
                filedDeadlines = []
                #endif
                blocks = []
                freeBlock = -1
            }
            return
        }
        guard slots.capacity > keeping, count < slots.count / 4 else { return }
        // Every live entry appended again, bucket by bucket, to fresh blocks of a fresh array.
        let old = (slots: slots, blocks: blocks, states: bucketStates)
        #if DEBUG
        let oldFiled = filedDeadlines
        filedDeadlines = []
        #endif
        let mask = Self.blockSize &- 1
        slots = []
        slots.reserveCapacity(old.states.reduce(0) { $0 + ((Int($1.live) + mask) & ~mask) })
        blocks = []
        freeBlock = -1
        for index in old.states.indices where old.states[index].live > 0 {
            bucketStates[index] = BucketState()
            bucketStates[index].live = old.states[index].live
            var chain = old.states[index].head
            while chain >= 0 {
                let base = Int(chain) << Self.blockShift
                for position in base..<(base &+ Self.blockSize) where !old.slots[position].isHole {
                    let element = old.slots[position]
                    // Fewer blocks than before: linking one cannot fail.
                    let moved = appendPosition(to: index, filler: element.reference)!
                    slots[moved] = element
                    #if DEBUG
                    filedDeadlines[moved] = oldFiled[position]
                    #endif
                    element.reference._withUnsafeGuaranteedRef { $0.heapIndex = -(moved + 2) }
                }
                chain = old.blocks[Int(chain)].next
            }
        }
    }
}
