/// A timer whose wake-up may be coalesced with a later one (Dispatch's leeway): the entries of the
/// loop engine's store and of ``DispatchTimerQueue``.
@usableFromInline
package protocol CoalescingTimer: HeapSlotEntry {
    /// How late, in nanoseconds, the timer's wake-up may come to share another one (0: none).
    var leeway: Int64 { get }
}

/// When a scheduler's timer driver must wake next: the one wake-up rule of the loop engine and the
/// Dispatch-backed timer queue.
///
/// Every timer has its own bound: its deadline plus its own leeway (saturating; a timer without
/// leeway: its deadline). Leeway is a coalescing allowance (Dispatch's meaning), never a
/// postponement:
/// 1. a timer alone wakes its driver at its deadline;
/// 2. a wake-up moves later only to share another waiting timer's deadline, and only where that
///    deadline is within every waiting timer's own bound: never past a zero-leeway timer's
///    deadline;
/// 3. never onto ``Nanoseconds/never`` (a saturated deadline is no wake-up to share);
/// 4. an armed wake-up serves (no re-arm) only if it is no later than ``target``: an arming that
///    was right for the timers then waiting is re-armed as soon as a timer with an earlier target
///    arrives, leeway or not.
///
/// So a saturated leeway still fires: at its deadline, or with the next timer. Cancelling the first
/// timer does not disarm (a cancel-heavy server would pay a re-arm per cancel): the driver fires
/// once for nothing and is re-armed then.
@usableFromInline
package struct TimerWake: Equatable, Sendable {
    /// When to wake: a waiting timer's deadline.
    @usableFromInline package var target: Int64

    /// A wake-up at `deadline`.
    @inlinable package init(at deadline: Int64) {
        target = deadline
    }

    /// Also serves something due at `deadline` with no allowance (a wall-clock timer, a wheel
    /// bucket that must reach the heap, a queue flush): nothing may wake later than that.
    @inlinable package mutating func include(_ deadline: Int64) {
        target = Swift.min(target, deadline)
    }

    /// Whether a driver armed for `armed` (nil: not armed) already serves this wake-up, so
    /// re-arming would only cost a syscall: it fires no later than ``target`` (an earlier one fires,
    /// runs nothing and re-arms).
    @inlinable package func isServed(byArmed armed: Int64?) -> Bool {
        guard let armed else { return false }
        return armed <= target
    }
}

extension IndexedHeap where Entry: CoalescingTimer {
    /// The wake-up the heap asks for (the rule: ``TimerWake``). Nil when the heap is empty or its
    /// first deadline is ``Nanoseconds/never``.
    ///
    /// The first two deadlines decide it: every other entry is due no earlier than the second, so
    /// its own bound is no earlier either, and the second's bound is at least its deadline. The
    /// wake-up moves to the second deadline when that is within the first entry's bound.
    @inlinable package var wake: TimerWake? {
        guard let first = firstKey, first.deadline != .max else { return nil }
        let leeway = storage[0].entry.leeway
        guard leeway > 0, let second = secondDeadline, second != .max else { return TimerWake(at: first.deadline) }
        let (bound, overflow) = first.deadline.addingReportingOverflow(leeway)
        guard overflow || second <= bound else { return TimerWake(at: first.deadline) }
        return TimerWake(at: second)
    }
}

extension WheeledHeap where Entry: CoalescingTimer {
    /// The heap's wake-up, no later than the wheel's next bucket must reach the heap (before any of
    /// its timers can be due). Nil when nothing needs a wake-up.
    @inlinable package var wake: TimerWake? {
        let wheelBy = nextAdvance
        guard var wake = heap.wake else { return wheelBy == .max ? nil : TimerWake(at: wheelBy) }
        if wheelBy != .max { wake.include(wheelBy) }
        return wake
    }
}
