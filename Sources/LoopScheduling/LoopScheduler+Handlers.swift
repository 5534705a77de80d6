import Foundation
import Scheduling

/// Closure-free timers on the loop (what `sleep`, `withTimeout` and `ticks` use): the handler is
/// stored inline in the timer entry, so a timer costs one 64-byte allocation and no closure
/// context. A timer the loop disposes because it shuts down — or refuses because it already did —
/// calls ``SchedulerTimerHandler/timerCancelledByScheduler()``, so an `await` on it is never left
/// suspended.
extension LoopScheduler {
    /// See `DateScheduler.schedule(after:leeway:handler:)`. `leeway` lets the wake-up coalesce
    /// with another within it; a lone timer still fires at its deadline.
    @discardableResult
    public func schedule<Handler: SchedulerTimerHandler>(
        after delay: Duration,
        leeway: Duration,
        handler: Handler
    ) -> any Disposable {
        BadInput.checkLeeway(leeway, method: "LoopScheduler.schedule(after:leeway:handler:)")
        let timer = HandlerLoopTimer(
            core: core,
            deadline: LoopTimerStore.deadline(after: delay, now: core.monotonicNow()),
            isWall: false,
            leeway: Nanoseconds.of(leeway),
            handler: handler
        )
        return core.scheduleTimer(timer)
    }

    /// See `DateScheduler.schedule(at:leeway:handler:)`. A non-finite date stops the program.
    @discardableResult
    public func schedule<Handler: SchedulerTimerHandler>(
        at date: Date,
        leeway: Duration,
        handler: Handler
    ) -> any Disposable {
        BadInput.checkDate(date, method: "LoopScheduler.schedule(at:leeway:handler:)")
        BadInput.checkLeeway(leeway, method: "LoopScheduler.schedule(at:leeway:handler:)")
        let timer = HandlerLoopTimer(
            core: core,
            deadline: Nanoseconds.sinceEpoch(date),
            isWall: true,
            leeway: Nanoseconds.of(leeway),
            handler: handler
        )
        return core.scheduleTimer(timer)
    }

    /// See `DateScheduler.schedule(after:repeatingEvery:leeway:handler:)`. When the loop shuts
    /// down, the handler hears `timerCancelledByScheduler()` (how a tick sequence ends).
    @discardableResult
    public func schedule<Handler: SchedulerTimerHandler>(
        after delay: Duration,
        repeatingEvery interval: Duration,
        leeway: Duration,
        handler: Handler
    ) -> any Disposable {
        BadInput.checkPeriod(
            interval,
            leeway: leeway,
            method: "LoopScheduler.schedule(after:repeatingEvery:leeway:handler:)"
        )
        let timer = PeriodicLoopTimer(
            core: core,
            deadline: LoopTimerStore.deadline(after: delay, now: core.monotonicNow()),
            isWall: false,
            interval: Nanoseconds.of(interval),
            leeway: Nanoseconds.of(leeway)
        ) { _ in handler.timerFired() }
        timer.onCancelledByScheduler = { handler.timerCancelledByScheduler() }
        return core.scheduleTimer(timer)
    }
}
