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
/// entry again by the deadline it has then). ``invariantViolations(mayAwaitRearm:)`` states the
/// rest.
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
    // Set by the moves and the cascade's steps (TimerWheel+Advance.swift, +Cascade.swift): internal.
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
    #if DEBUG
    /// Debug builds: per position of `slots`, the deadline its entry was filed by, raised by a lazy
    /// re-arm (``noteLaterDeadline(_:atHeapIndex:)``). ``invariantViolations(mayAwaitRearm:)``
    /// judges the entry's bucket by it while its live deadline may be a re-arm not filed yet.
    @usableFromInline var filedDeadlines: [Int64] = []
    #endif

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
}

extension TimerWheel: Sendable where Entry: Sendable {}
extension TimerWheel.Element: Sendable where Entry: Sendable {}
extension TimerWheel.BucketState: Sendable {}
extension TimerWheel.Block: Sendable {}
