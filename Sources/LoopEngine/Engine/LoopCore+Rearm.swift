@_spi(SchedulerEngine) import Scheduling

/// Rule 13 on the engine: a re-arm of one of the loop's timers, from the loop thread or another
/// (the protocol's transitions are `ActionLifecycle+Rearm.swift`; why it is safe, and why the loop
/// never waits in it, Docs/Design.md §4.13).
extension LoopCore {
    /// Moves `timer` to `deadline`, from any thread (``RearmableTimer``). False if it is not
    /// pending. Rule 13's protocol (`ActionLifecycle+Rearm.swift`, Docs/Design.md §4.13): on the
    /// loop thread the store moves the timer, lazily when later (``DeadlineStore/rearm(_:to:)``),
    /// unless another thread is re-arming it, whose re-arm then has the last word; from another
    /// thread the deadline is written in place, and the timer is queued to be filed again when the
    /// new deadline is earlier than the one it replaced, or when the loop left it to this re-arm.
    /// The loop thread never waits here.
    func rearm(_ timer: LoopTimer, to deadline: Int64) -> Bool {
        if isOnLoopThread {
            switch ActionLifecycle.beginOwnerRearm(timer.state) {
            case .move: timers.rearm(self, timer, to: deadline)
            case .leftToRearm: break
            case .refused: return false
            }
            return true
        }
        guard ActionLifecycle.beginRearm(timer.state) else { return false }
        let replaced = timer.exchangeDeadline(deadline)
        #if DEBUG
        rearmWindow.pause(timer)
        #endif
        switch ActionLifecycle.endRearm(timer.state) {
        case .published:
            if deadline < replaced { _ = remote.submit(.rearmed(timer)) }
        case .refileRequested:
            _ = remote.submit(.rearmed(timer))
        case .disposed:
            return false
        }
        return true
    }

    /// ``rearm(_:to:)`` at `delay` from now, by the timer's clock (a wall-clock timer moves to the
    /// date `now + delay`).
    func rearm(_ timer: LoopTimer, after delay: Duration) -> Bool {
        let now = timer.isWall ? wallNow() : monotonicNow()
        return rearm(timer, to: DeadlineStore.deadline(after: delay, now: now))
    }
}
