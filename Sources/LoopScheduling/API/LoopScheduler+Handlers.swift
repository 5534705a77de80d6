import Foundation
import LoopEngine
@_spi(SchedulerEngine) import Scheduling

/// Closure-free timers on the loop (what `sleep`, `withTimeout` and `ticks` use): the handler is
/// stored inline in the timer entry, so a timer costs one 64-byte allocation and no closure
/// context. A timer the loop disposes because it shuts down — or refuses because it already did —
/// calls ``SchedulerTimerHandler/timerCancelledByScheduler()``, so an `await` on it is never left
/// suspended.
extension LoopScheduler {
    /// See `DateScheduler.schedule(_:leeway:handler:)`. `leeway` lets the wake-up coalesce with
    /// another within it; a lone timer still fires at its deadline.
    @discardableResult
    public func schedule(_ start: TimerStart, leeway: Duration, handler: some SchedulerTimerHandler) -> any Disposable {
        core.scheduleTimer(start, leeway: leeway, handler: handler)
    }

    /// See `DateScheduler.schedule(_:handler:)`. When the loop shuts down, the handler hears
    /// `timerCancelledByScheduler()` (how a tick sequence ends).
    @discardableResult
    public func schedule(_ schedule: PeriodicSchedule, handler: some SchedulerTimerHandler) -> any Disposable {
        schedulePeriodic(
            schedule,
            tick: { _ in handler.timerFired() },
            cancelledByScheduler: { handler.timerCancelledByScheduler() }
        )
    }
}
