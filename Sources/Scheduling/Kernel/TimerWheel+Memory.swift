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
                blocks = []
                freeBlock = -1
            }
            return
        }
        guard slots.capacity > keeping, count < slots.count / 4 else { return }
        var packed: [Element] = []
        var packedBlocks: [Block] = []
        let mask = Self.blockSize &- 1
        packed.reserveCapacity(bucketStates.reduce(0) { $0 + ((Int($1.live) + mask) & ~mask) })
        for index in bucketStates.indices where bucketStates[index].live > 0 {
            var state = BucketState()
            state.live = bucketStates[index].live
            var chain = bucketStates[index].head
            while chain >= 0 {
                let base = Int(chain) << Self.blockShift
                for position in base..<(base &+ Self.blockSize) where !slots[position].isHole {
                    let element = slots[position]
                    let size = Int(state.size)
                    if size & mask == 0 {
                        packedBlocks.append(Block(next: state.head, bucket: Int32(truncatingIfNeeded: index)))
                        state.head = Int32(truncatingIfNeeded: packedBlocks.count - 1)
                        packed.append(
                            contentsOf: repeatElement(Element(element.reference, Element.holeBit), count: Self.blockSize)
                        )
                    }
                    let moved = Int(state.head) << Self.blockShift | size & mask
                    packed[moved] = element
                    element.reference._withUnsafeGuaranteedRef { $0.heapIndex = -(moved + 2) }
                    state.size &+= 1
                }
                chain = blocks[Int(chain)].next
            }
            bucketStates[index] = state
        }
        slots = packed
        blocks = packedBlocks
        freeBlock = -1
    }
}
