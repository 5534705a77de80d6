// The wheel following the clock: which bucket comes next, when it must move, and moving it down a
// level or into the heap (a big one in chunks: TimerWheel+Cascade.swift).

extension TimerWheel {
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
