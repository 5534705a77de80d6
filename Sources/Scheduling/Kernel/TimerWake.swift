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
/// Leeway is a coalescing allowance (Dispatch's meaning), never a postponement: a timer alone wakes
/// its driver at its deadline. Its leeway only lets that wake-up move to one that falls within it
/// anyway, the one already armed or the next timer's deadline, so two wake-ups become one; a
/// saturated leeway therefore still fires, at the deadline or with the next timer. Cancelling the
/// first timer does not disarm (a cancel-heavy server would pay a re-arm per cancel): the driver
/// fires once for nothing and is re-armed then.
@usableFromInline
package struct TimerWake: Equatable, Sendable {
    /// When to wake.
    @usableFromInline package var target: Int64
    /// The latest wake-up that still serves every timer counted so far.
    @usableFromInline package var latest: Int64

    /// A wake-up exactly at `deadline`, with no allowance.
    @inlinable package init(at deadline: Int64) {
        target = deadline
        latest = deadline
    }

    @inlinable package init(target: Int64, latest: Int64) {
        self.target = target
        self.latest = latest
    }

    /// Also serves something due at `deadline` with no allowance (a wall-clock timer, a wheel
    /// bucket that must reach the heap, a queue flush): nothing may wake later than that.
    @inlinable package mutating func include(_ deadline: Int64) {
        target = Swift.min(target, deadline)
        latest = Swift.min(latest, deadline)
    }

    /// Whether a driver armed for `armed` (nil: not armed) already serves this wake-up, so
    /// re-arming would only cost a syscall.
    @inlinable package func isServed(byArmed armed: Int64?) -> Bool {
        guard let armed else { return false }
        return armed <= latest
    }
}

extension IndexedHeap where Entry: CoalescingTimer {
    /// The wake-up the first entry asks for, moved to the second entry's deadline when that falls
    /// within the first one's leeway (every other entry is at least that late). Nil when the heap
    /// is empty or its first deadline is ``Nanoseconds/never``.
    @inlinable package var wake: TimerWake? {
        guard let first = firstKey, first.deadline != .max else { return nil }
        let leeway = storage[0].entry.leeway
        guard leeway > 0 else { return TimerWake(at: first.deadline) }
        let (sum, overflow) = first.deadline.addingReportingOverflow(leeway)
        let latest = overflow ? Int64.max : sum
        guard let second = secondDeadline, second <= latest else {
            return TimerWake(target: first.deadline, latest: latest)
        }
        return TimerWake(target: Swift.max(first.deadline, second), latest: latest)
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
