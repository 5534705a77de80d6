/// Far timers in coarse buckets, in front of an ``IndexedHeap`` that keeps the precise order: a
/// hierarchical timing wheel (tokio's layout: 6 levels of 64 slots, an occupancy bitmap per level)
/// whose lowest slots are not fired but handed to the heap one tick before they can be due.
///
/// A timeout that is cancelled while it is still far away (nearly all of them) costs a store into
/// a bucket and a hole left in its place: O(1), no sift through a heap that outgrew the cache, and
/// nothing of the timer kept until its bucket comes round. A hole (not a swap with the bucket's
/// last entry) because the swap writes the moved entry's position: a cache miss on a cold entry
/// per random cancel, the most expensive part of a cancel at millions of pending timers. Holes
/// form a free list per bucket, most recent first, so the next insert into the bucket reuses the
/// slot a cancel just left (still in cache). A timer that survives moves down a level each time
/// its bucket's range starts (at most five moves, each O(1)) and into the heap keyed by its exact
/// `(deadline, sequence)`, so it fires with the heap's precision, in order with everything else.
/// A big bucket above level 0 may move down in chunks, between its scheduler's rounds of firing,
/// before any of its timers is due (``Cascade``).
///
/// Buckets are chains of 16-slot blocks cut from one array shared by all of them, emptied blocks
/// going to a free list that any bucket takes from (TimerWheel+Blocks.swift). A bucket that grows
/// takes a block, never reallocates: the wheel asks the allocator for memory only when it holds
/// more timers than it ever did. Per-bucket arrays asked for a kilobyte or more whenever a bucket
/// outgrew its buffer (a level-1 bucket filled by a level-2 move, a level-0 one at a high firing
/// rate), and glibc serves such a request only after it consolidated every small chunk freed
/// since its last one (every timer entry and closure that fired in between): a stall of
/// milliseconds in front of due timers.
///
/// Ticks are `deadline >> tickShift` nanoseconds. `elapsed` is the last tick handed to the heap:
/// every entry in the wheel is due at a later tick, in the slot of the highest 6-bit digit in
/// which its tick differs from `elapsed` (but for the entries of a ``Cascade`` not moved yet,
/// which stay in their blocks, tick `elapsed` included). That slot never changes until the wheel
/// processes it (advancing never crosses an occupied slot's start). Only an entry's position in
/// the shared array is stored, in its `heapIndex`, as `-(position + 2)` (-1 means in no store, 0
/// and up a heap slot); its bucket is its block's owner. An entry's deadline may move later while
/// it waits (a lazy re-arm, ``WheeledHeap/rearm(_:to:)``): its bucket then starts before the
/// deadline's own, which is the one lag the wheel allows (early is correct: the move files the
/// entry again by the deadline it has then). ``invariantViolations()`` states the rest.
///
/// Like the heap, the wheel holds one retain of each entry, is not copyable (a copy would give the
/// retains back twice) and releases what it still holds when dropped.
///
/// - Complexity: `insert` and `remove` O(1); moving a bucket O(its slots); finding the next
///   occupied bucket O(levels) with the bitmaps.
@usableFromInline
package struct TimerWheel<Entry: HeapSlotEntry>: ~Copyable {
    @usableFromInline
    package struct Element {
        /// Retained by the wheel while the entry is in it; in a hole, the reference of an entry
        /// that left (or of the one whose insert made the block), never retained nor dereferenced.
        @usableFromInline var reference: Unmanaged<Entry>
        /// Stamped when the timer was scheduled: the heap orders equal deadlines by it. In a hole,
        /// ``holeBit`` and the next hole's position plus one (0: the last hole).
        @usableFromInline var sequence: UInt64

        /// Sequence numbers count up from 0 and never reach it.
        @inlinable static var holeBit: UInt64 { 1 << 63 }

        @inlinable init(_ reference: Unmanaged<Entry>, _ sequence: UInt64) {
            self.reference = reference
            self.sequence = sequence
        }

        @inlinable var isHole: Bool { sequence & Self.holeBit != 0 }
    }

    /// A bucket's bookkeeping: its chain of blocks, its live count and its free list.
    @usableFromInline
    struct BucketState {
        /// Entries in the bucket (its blocks also hold holes).
        @usableFromInline var live: Int32 = 0
        /// The most recent hole's position, or -1.
        @usableFromInline var freeHead: Int32 = -1
        /// The newest block of the chain (the one the next append goes to), or -1.
        @usableFromInline var head: Int32 = -1
        /// Slots handed out, holes included: the cost of moving the bucket.
        @usableFromInline var size: Int32 = 0

        @inlinable init() {}
    }

    /// A block's link in its bucket's chain or in the free list, and its owner.
    @usableFromInline
    struct Block {
        /// The next block of the chain, or -1.
        @usableFromInline var next: Int32
        /// The bucket it belongs to (a cascade's included, until moved), or -1 when free.
        @usableFromInline var bucket: Int32

        @inlinable init(next: Int32, bucket: Int32) {
            self.next = next
            self.bucket = bucket
        }
    }

    @inlinable static var levels: Int { 6 }
    @inlinable static var slotsPerLevel: Int { 64 }
    /// log2 of a block's slots: 16 slots of 16 bytes, so that a bucket holding one timer costs
    /// 256 bytes, and a move still reads a block's deadlines (each a cache miss) in one pass of as
    /// many loads as a core keeps in flight. `refile(block:into:)`'s buffer has this size.
    @inlinable static var blockShift: Int { 4 }
    @inlinable package static var blockSize: Int { 1 << blockShift }
    /// Entries a level-0 bucket holds at most, four blocks: the rest of its tick goes to the heap,
    /// which they would reach within 64 ticks anyway. Kept at most `WheeledHeap.smallBucket`, so a
    /// full level-0 bucket still moves before its scheduler blocks (one wake-up, at the deadline),
    /// and a burst's level-0 move stays short.
    @inlinable package static var levelZeroCapacity: Int { 4 * blockSize }

    /// log2 of a level-0 slot's width in nanoseconds.
    @usableFromInline package let tickShift: Int
    /// Slots a big bucket above level 0 moves down per call of ``advance(now:into:continuesCascade:)``
    /// (``Cascade``); `Int.max` moves every bucket whole.
    @usableFromInline package let cascadeBudget: Int
    /// Every bucket's blocks, `blockSize` slots each; a position indexes it.
    // Written by the block and memory steps (TimerWheel+Blocks.swift, +Memory.swift): internal.
    @usableFromInline var slots: [Element] = []
    /// Per block of `slots`, its chain link and owner.
    @usableFromInline var blocks: [Block] = []
    /// The first free block, or -1.
    @usableFromInline var freeBlock: Int32 = -1
    /// `levels × 64` buckets, level-major.
    @usableFromInline var bucketStates: [BucketState]
    /// Per level, bit `s` set when bucket `s` holds an entry.
    @usableFromInline var occupied: [UInt64]
    /// The last tick handed to the heap (see the type's notes).
    // Set here and by the cascade's steps (TimerWheel+Cascade.swift): hence internal, not private.
    @usableFromInline package internal(set) var elapsed: Int64 = 0
    @usableFromInline package internal(set) var count = 0
    /// The start tick of the earliest occupied bucket, or `Int64.max`; recomputed after a move and
    /// lowered on insert (a removal may leave it early: one wake-up that moves nothing).
    @usableFromInline var nextStart: Int64 = .max
    /// The bucket that starts at `nextStart` (when it is not `Int64.max`): its size says how far
    /// ahead its move may begin (``cascadeLead(of:)``).
    @usableFromInline var nextIndex = 0
    /// A big bucket moving down a chunk at a time, or nil (see ``Cascade``).
    @usableFromInline var cascade: Cascade?

    /// Whether a big bucket is moving down in chunks: its scheduler should look again at once.
    @inlinable package var isCascading: Bool { cascade != nil }

    /// A wheel whose level-0 slots are `1 << tickShift` nanoseconds wide; level `l` slots are
    /// `64^l` times wider. Six levels cover `2^(36 + tickShift)` nanoseconds; later deadlines stay
    /// in the heap. A `cascadeBudget` of 0 would start cascades that never move.
    @inlinable package init(tickShift: Int, cascadeBudget: Int = .max) {
        precondition(tickShift >= 0 && tickShift < 26, "TimerWheel: tickShift \(tickShift) out of range")
        precondition(cascadeBudget > 0, "TimerWheel: a cascade budget of \(cascadeBudget) moves nothing")
        self.tickShift = tickShift
        self.cascadeBudget = cascadeBudget
        bucketStates = Array(repeating: BucketState(), count: Self.levels * Self.slotsPerLevel)
        occupied = Array(repeating: 0, count: Self.levels)
    }

    @inlinable deinit {
        forEachHeld { element in
            element.reference._withUnsafeGuaranteedRef { $0.heapIndex = -1 }
            element.reference.release()
        }
    }

    @inlinable package var isEmpty: Bool { count == 0 }

    /// The level at which `when` is filed relative to `elapsed` (`when > elapsed`): the highest
    /// 6-bit digit in which they differ; `levels` or more means beyond the wheel.
    @inlinable @inline(__always)
    static func level(_ elapsed: Int64, _ when: Int64) -> Int {
        let differing = UInt64(bitPattern: elapsed ^ when)
        return (63 - differing.leadingZeroBitCount) / 6
    }

    @inlinable @inline(__always)
    func bucket(of when: Int64) -> (level: Int, slot: Int) {
        let level = Self.level(elapsed, when)
        return (level, Int(truncatingIfNeeded: when >> (6 * level)) & 63)
    }

    /// The first tick of `slot` at `level`, in the rotation `elapsed` is in.
    @inlinable @inline(__always)
    func start(level: Int, slot: Int) -> Int64 {
        let above = elapsed & ~((Int64(1) << (6 * (level + 1))) &- 1)
        return above | (Int64(slot) << (6 * level))
    }

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

    /// The earliest occupied bucket, lowest level first: an entry at level `l` shares every digit
    /// above `l` with `elapsed`, so it is due before any entry of a higher level.
    @inlinable
    func nextOccupied() -> (level: Int, slot: Int, start: Int64)? {
        for level in 0..<Self.levels {
            let digit = UInt64(truncatingIfNeeded: elapsed >> (6 * level)) & 63
            // Entries sit strictly after elapsed's own digit at their level.
            let later = occupied[level] & ~((UInt64(2) << digit) &- 1)
            if later != 0 {
                let slot = later.trailingZeroBitCount
                return (level, slot, start(level: level, slot: slot))
            }
        }
        return nil
    }

    /// The earliest time (nanoseconds) at which ``advance(now:into:continuesCascade:)`` has
    /// work: one tick before the earliest occupied bucket's range starts, so its entries reach the
    /// heap before any can be due, or earlier for a big bucket that will move in chunks
    /// (``cascadeLead(of:)``). `Int64.max` when the wheel is empty.
    @inlinable package var nextAdvance: Int64 {
        // A cascade under way goes on at the next look, between the timers it fires.
        if cascade != nil { return .min }
        guard nextStart != .max else { return .max }
        // `elapsed` starts at 0 and only grows, so buckets start at tick 1 or later, and a lead is
        // at most 4,096 ticks: this cannot overflow.
        return (nextStart &- cascadeLead(of: nextIndex)) << tickShift
    }

    /// Hands to `heap` every entry due before the end of the tick after `now`'s, moving the others
    /// down a level where their bucket's range began, and moves `elapsed` to that tick (or to the
    /// first tick of a big bucket whose move began ahead, up to 4,096 ticks later); a cascade
    /// under way may leave entries due from its bucket's first tick on, never earlier.
    ///
    /// With a ``cascadeBudget``, a bucket above level 0 of more entries than that moves down at
    /// least that many slots at a time (whole blocks), one chunk per call that `continuesCascade`
    /// (``Cascade``; ``nextAdvance`` asks for the next call at once), from a tick per chunk ahead
    /// of its range when it is the earliest occupied bucket (``cascadeLead(of:)``) until its first
    /// tick, from when any call moves the rest at once. A caller about to fire what is due passes
    /// `continuesCascade: false`, so that the chunks run between its rounds of firing, not one
    /// before each timer it pops.
    ///
    /// Called on an empty wheel too (cheaply), so that `elapsed` follows the clock: a timer
    /// scheduled after a quiet spell is filed relative to a recent tick, at the level its delay
    /// calls for, instead of cascading down from a stale one.
    @inlinable package mutating func advance(
        now: Int64,
        into heap: inout IndexedHeap<Entry>,
        continuesCascade: Bool = true
    ) {
        let budget = cascadeBudget
        let target = Swift.max(elapsed, (now >> tickShift) &+ 1)
        if let cascade {
            if now >= cascade.finishBy {
                continueCascade(into: &heap, budget: .max)
            } else if continuesCascade {
                continueCascade(into: &heap, budget: budget)
            }
        }
        if count == 0 {
            elapsed = target
            nextStart = .max
            return
        }
        // A bucket moves once `target` reached its first tick, or the tick after its lead began
        // (a lead of one tick: its first tick, as `nextAdvance` says); whole once that tick came.
        while count > 0, cascade == nil, let next = nextOccupied(),
            next.start &- cascadeLead(of: next.level &* 64 &+ next.slot) &+ 1 <= target
        {
            move(
                next,
                into: &heap,
                budget: next.start << tickShift > now ? budget : .max,
                continuesCascade: continuesCascade
            )
        }
        // A cascade begun ahead of its bucket put `elapsed` at the bucket's first tick, later than
        // `target`: entries were filed relative to it, so it never goes back.
        elapsed = Swift.max(elapsed, target)
        updateNextStart()
    }

    /// The earliest occupied bucket's first tick and how many slots moving it visits (its entries
    /// and the holes cancels left among them): the cost of the move.
    @inlinable package var nextBucket: (start: Int64, count: Int)? {
        guard count > 0, cascade == nil, let next = nextOccupied() else { return nil }
        return (next.start, Int(bucketStates[next.level &* 64 &+ next.slot].size))
    }

    /// Processes the earliest occupied bucket now, before its range begins: its entries go down a
    /// level or into `heap`, and `elapsed` moves to the bucket's first tick (so timers due before
    /// it go straight to the heap from now on). Early is always correct, the heap being precise;
    /// it only trades the wheel's O(1) cancel for those timers against a wake-up.
    @inlinable package mutating func moveNextBucket(into heap: inout IndexedHeap<Entry>) {
        // A cascade under way ends first: what it files may start before the bucket found now,
        // and `elapsed` moving past that would leave it a rotation late.
        if cascade != nil { continueCascade(into: &heap, budget: .max) }
        guard count > 0, let next = nextOccupied() else { return }
        move(next, into: &heap)
        updateNextStart()
    }

    @inlinable
    mutating func move(
        _ next: (level: Int, slot: Int, start: Int64),
        into heap: inout IndexedHeap<Entry>,
        budget: Int = .max,
        continuesCascade: Bool = true
    ) {
        let index = next.level &* 64 &+ next.slot
        let cascades = next.level > 0 && Int(bucketStates[index].live) > budget
        // A cascade under way ended before `next` was found (`moveNextBucket`); in `advance` no
        // other bucket starts before the cascade's first tick, so none moves while it runs.
        assert(cascade == nil, "TimerWheel.move: a cascade is under way")
        elapsed = next.start
        occupied[next.level] &= ~(1 << UInt64(next.slot))
        var chain = bucketStates[index].head
        if cascades {
            // The blocks stay where they are, still owned by the bucket, whose live count is now
            // the cascade's; the chain is the cascade's to walk.
            bucketStates[index].head = -1
            bucketStates[index].size = 0
            bucketStates[index].freeHead = -1
            cascade = Cascade(index: index, block: chain, finishBy: next.start << tickShift)
            if continuesCascade { continueCascade(into: &heap, budget: budget) }
            return
        }
        bucketStates[index] = BucketState()
        while chain >= 0 {
            let block = Int(chain)
            chain = blocks[block].next
            refile(block: block, into: &heap)
            releaseBlock(block)
        }
    }
}

extension TimerWheel: Sendable where Entry: Sendable {}
extension TimerWheel.Element: Sendable where Entry: Sendable {}
extension TimerWheel.BucketState: Sendable {}
extension TimerWheel.Block: Sendable {}
