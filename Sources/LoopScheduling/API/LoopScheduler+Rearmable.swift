import Foundation
import LoopEngine
@_spi(SchedulerEngine) import Scheduling

/// Re-armable timers on the loop: the idle timeout pushed back per request. The handle is the timer
/// entry itself, so a re-arm allocates nothing; pushed later while the timer waits in the wheel
/// (the common case: a deadline tens of seconds away), it only writes the new deadline, and the
/// timer moves once, when its first bucket comes due.
extension LoopScheduler {
    /// See `DateScheduler.scheduleRearmable(_:leeway:_:)`. On the loop thread (an actor pinned to
    /// the loop, an action) a re-arm to a later deadline is O(1) and moves nothing; to an earlier
    /// one it moves the timer at once. From another thread a later deadline is written in place and
    /// wakes nothing; an earlier one reaches the loop as a new timer would (waking it if it must).
    /// After ``syncShutdown()`` began the timer is refused: it never runs and `rearm` returns false.
    @discardableResult
    public func scheduleRearmable(
        _ start: TimerStart,
        leeway: Duration,
        _ action: __owned @escaping @Sendable () -> Void
    ) -> any RearmableTimer {
        BadInput.checkLeeway(leeway, method: "LoopScheduler.scheduleRearmable(_:leeway:_:)")
        if leeway > .zero { return scheduleRearmable(start, leeway: leeway, handler: ClosureHandler(fire: action)) }
        return core.scheduleRearmable(start, consume action)
    }

    /// See `DateScheduler.scheduleRearmable(_:leeway:handler:)`: the handler stays in the entry
    /// across re-arms; when the loop shuts down it hears `timerCancelledByScheduler()`.
    @discardableResult
    public func scheduleRearmable(
        _ start: TimerStart,
        leeway: Duration,
        handler: some SchedulerTimerHandler
    ) -> any RearmableTimer {
        BadInput.checkLeeway(leeway, method: "LoopScheduler.scheduleRearmable(_:leeway:handler:)")
        return core.scheduleRearmable(start, leeway: leeway, handler: handler)
    }
}

/// A closure as a timer handler: a re-armable closure timer with leeway keeps it inline.
private struct ClosureHandler: SchedulerTimerHandler {
    let fire: @Sendable () -> Void
    func timerFired() { fire() }
}
