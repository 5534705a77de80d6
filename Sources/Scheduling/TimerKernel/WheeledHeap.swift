/// The monotonic timers of a scheduler: an ``IndexedHeap`` for those due within the horizon (the
/// tick after the current one) and a ``TimerWheel`` in front of it for the rest. Shared by the
/// LoopScheduler's store and the Dispatch-backed schedulers' timer queue.
///
/// Every timer that fires is popped from ``heap``, in `(deadline, sequence)` order: callers
/// ``advance(monotonicNow:continuesCascade:)`` first, which hands every timer due by then (and up
/// to one tick later) to the heap with its sequence, and arm their wake-up no later than
/// ``nextAdvance``.
/// An entry's `heapIndex` says where it is: 0 and up a heap slot, -2 and down a wheel position,
/// -1 nowhere.
@usableFromInline
package struct WheeledHeap<Entry: HeapSlotEntry>: ~Copyable {
    @usableFromInline package var heap: IndexedHeap<Entry>
    @usableFromInline package var wheel: TimerWheel<Entry>

    /// A bucket this small, starting within 64 ticks, moves into the heap when the scheduler is
    /// about to sleep (``advance(monotonicNow:continuesCascade:beforeSleeping:)``) rather than
    /// costing a wake-up one tick early: a lone or periodic timer wakes its scheduler once, at
    /// its deadline.
    @inlinable package static var smallBucket: Int { 64 }

    /// log2 of the wheel's level-0 slot width: 2^20 ns, about 1 ms (tokio's), which makes six
    /// levels reach 2^56 ns; the note on issue 16 has the measurements that chose it.
    @inlinable package static var defaultTickShift: Int { 20 }

    /// A store whose wheel moves big buckets `cascadeBudget` slots at a time (see
    /// `TimerWheel.Cascade`; `Int.max`, whole).
    @inlinable package init(tickShift: Int, shrinksOnRemoval: Bool, cascadeBudget: Int = .max) {
        heap = IndexedHeap(shrinksOnRemoval: shrinksOnRemoval)
        wheel = TimerWheel(tickShift: tickShift, cascadeBudget: cascadeBudget)
    }

    @inlinable package var count: Int { heap.count + wheel.count }
    @inlinable package var isEmpty: Bool { heap.isEmpty && wheel.isEmpty }
    /// Slots allocated in the heap and the wheel, for the memory tests.
    @inlinable package var capacity: Int { heap.storage.capacity + wheel.capacity }

    /// Files `entry` (not in any store) with the sequence stamped when it was scheduled.
    @inlinable package mutating func insert(_ entry: Entry, sequence: UInt64) {
        precondition(entry.heapIndex == -1, "WheeledHeap.insert: the entry is already in a store")
        let reference = Unmanaged.passRetained(entry)
        if !wheel.insert(reference, deadline: entry.deadline, sequence: sequence) {
            heap.insert(retained: reference, deadline: entry.deadline, sequence: sequence)
        }
    }

    /// Removes `entry` from the wheel or the heap. Returns false if it was in neither.
    @inlinable @discardableResult
    package mutating func remove(_ entry: Entry) -> Bool {
        let slot = entry.heapIndex
        if slot <= -2 { return wheel.remove(entry) }
        guard slot >= 0 else { return false }
        heap.remove(entry)
        return true
    }

    /// The one way the store's buckets move: hands the wheel's buckets that start within the
    /// horizon to the heap; on an empty wheel, moves its clock along (cheap). With a cascade
    /// budget, a big bucket above level 0 moves down that many slots per call that
    /// `continuesCascade`, before any of its timers can be due (see `TimerWheel.Cascade`).
    ///
    /// `beforeSleeping`: the caller is about to arm its wake-up for ``wake`` and wait. Small
    /// buckets due soon, whose move would be the next wake-up, move now too (see ``smallBucket``),
    /// so that a lone or periodic timer wakes its scheduler once, at its deadline.
    @inlinable @inline(__always)
    package mutating func advance(monotonicNow: Int64, continuesCascade: Bool = true, beforeSleeping: Bool = false) {
        if monotonicNow >= wheel.nextAdvance || wheel.isEmpty {
            wheel.advance(now: monotonicNow, into: &heap, continuesCascade: continuesCascade)
        }
        if beforeSleeping { moveSmallBuckets(monotonicNow: monotonicNow) }
    }

    /// The earliest time the wheel needs ``advance(monotonicNow:continuesCascade:)``: a wake-up at
    /// or before it serves. `Int64.max` when the wheel is empty.
    @inlinable package var nextAdvance: Int64 { wheel.nextAdvance }

    /// ``advance(monotonicNow:continuesCascade:beforeSleeping:)``'s early moves: small buckets
    /// due soon move now (see ``smallBucket``). These moves take `elapsed` at most 64 ticks ahead,
    /// so timers due later keep going to the wheel (a big bucket's early move may take it
    /// further: see `TimerWheel.cascadeLead(of:)`).
    @inlinable mutating func moveSmallBuckets(monotonicNow: Int64) {
        let (ahead, overflow) = monotonicNow.addingReportingOverflow(Int64(64) << wheel.tickShift)
        let soon = (overflow ? Int64.max : ahead) >> wheel.tickShift
        while let next = wheel.nextBucket, next.start <= soon, next.count <= Self.smallBucket,
            wheel.nextAdvance < heap.firstKey?.deadline ?? .max
        {
            wheel.moveNextBucket(into: &heap)
        }
        // What moved may leave next a big bucket whose chunks should begin by now (its lead).
        if monotonicNow >= wheel.nextAdvance, !wheel.isCascading {
            wheel.advance(now: monotonicNow, into: &heap)
        }
    }

    /// Empties both (shutdown), leaving every entry's slot at -1.
    @inlinable package mutating func removeAll() -> [Entry] {
        heap.removeAll() + wheel.removeAll()
    }

    /// Gives back what a burst grew: a sparse heap down to `keeping` slots, the wheel's blocks
    /// when it is empty or sparse.
    @inlinable package mutating func shrink(keeping: Int) {
        heap.shrinkIfSparse(minimumCapacity: keeping)
        wheel.shrinkBuckets(keeping: keeping)
    }
}

/// An entry whose deadline its store may change: a timer that can be pushed back.
@usableFromInline
package protocol RearmableEntry: HeapSlotEntry {
    /// When the entry is due. The store writes it in ``WheeledHeap/rearm(_:to:)``; an owner may
    /// let it be written elsewhere too (the loop's timers: a re-arm from another thread writes it in
    /// place, and the loop reads it again when the entry's bucket moves or when it pops the entry:
    /// Docs/Design.md §4.13), so a filed key may be earlier than the entry's deadline.
    var deadline: Int64 { get set }
}

extension WheeledHeap where Entry: RearmableEntry {
    /// Moves a filed entry to `deadline`, keeping the sequence it was filed with (equal deadlines
    /// stay in the order the entries were first scheduled). Returns false, changing nothing, if
    /// the entry is in neither the wheel nor the heap.
    ///
    /// A later deadline for an entry in the wheel only changes the entry's `deadline`: O(1), no
    /// slot is touched. The entry stays in its bucket, which starts earlier than the new deadline
    /// needs (the one lag the wheel allows, see `TimerWheel.invariantViolations(mayAwaitRearm:)`); when the
    /// bucket comes due, its move files the entry again by the deadline it has then, so a timer
    /// pushed back many times moves once. An earlier deadline, or an entry in the heap (due
    /// within the horizon), is taken out and filed again at once.
    @inlinable @discardableResult
    package mutating func rearm(_ entry: Entry, to deadline: Int64) -> Bool {
        let slot = entry.heapIndex
        if slot <= -2 && deadline >= entry.deadline {
            entry.deadline = deadline
            wheel.noteLaterDeadline(deadline, atHeapIndex: slot)
            return true
        }
        guard let sequence = take(entry) else { return false }
        entry.deadline = deadline
        insert(entry, sequence: sequence)
        return true
    }

    /// Files a filed entry again, at once, by the deadline it has now (set by its owner: a
    /// deadline moved earlier than where it waits), keeping its sequence. Returns false if it is
    /// in neither the wheel nor the heap.
    @inlinable @discardableResult
    package mutating func reposition(_ entry: Entry) -> Bool {
        guard let sequence = take(entry) else { return false }
        insert(entry, sequence: sequence)
        return true
    }

    /// Removes a filed entry and returns the sequence it was filed with; nil if it is in neither.
    @inlinable
    mutating func take(_ entry: Entry) -> UInt64? {
        let slot = entry.heapIndex
        if slot <= -2 {
            let sequence = wheel.sequence(atHeapIndex: slot)
            return wheel.remove(entry) ? sequence : nil
        }
        return heap.take(entry)
    }
}

extension WheeledHeap {
    /// Every broken invariant of the wheel and the heap together (see
    /// `TimerWheel.invariantViolations(mayAwaitRearm:)` and
    /// `IndexedHeap.invariantViolations(mayAwaitRearm:)`); empty when sound. O(n).
    package func invariantViolations(mayAwaitRearm: (Entry) -> Bool = { _ in false }) -> [String] {
        wheel.invariantViolations(mayAwaitRearm: mayAwaitRearm) + heap.invariantViolations(mayAwaitRearm: mayAwaitRearm)
    }

    /// The debug builds' check of a store that stands still (between two of its owner's
    /// operations): when `sampler` says it is time, stops the program with what
    /// ``invariantViolations(mayAwaitRearm:)`` finds in this store and in `wall`, its owner's
    /// wall-clock heap. `owner` names the store in the message.
    package func assertSound(
        with wall: borrowing IndexedHeap<Entry>,
        sampler: inout InvariantSampler,
        mayAwaitRearm: (Entry) -> Bool,
        owner: String
    ) {
        let buckets = TimerWheel<Entry>.levels &* TimerWheel<Entry>.slotsPerLevel
        guard sampler.isDue(size: heap.count &+ wall.count &+ wheel.capacity &+ buckets) else { return }
        let found = invariantViolations(mayAwaitRearm: mayAwaitRearm)
            + wall.invariantViolations(mayAwaitRearm: mayAwaitRearm)
        if !found.isEmpty {
            assertionFailure("\(owner): \(found.count) broken invariants of its timer store: \(found.prefix(5))")
        }
    }
}

extension WheeledHeap: Sendable where Entry: Sendable {}
