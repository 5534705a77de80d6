import Foundation

/// Handler timers go where the subscription scheduler's closure timers go (the current date
/// scheduler, or its background one), as handler timers, so a loop's shutdown still reaches them.
extension SubscriptionScheduler {
    private var handlerTarget: any DateScheduler {
        (Schedulers.current as? any DateScheduler) ?? background
    }

    /// See ``DateScheduler/schedule(after:leeway:handler:)``.
    @discardableResult
    public func schedule<Handler: SchedulerTimerHandler>(
        after delay: Duration,
        leeway: Duration,
        handler: Handler
    ) -> any Disposable {
        handlerTarget.schedule(after: delay, leeway: leeway, handler: handler)
    }

    /// See ``DateScheduler/schedule(at:leeway:handler:)``.
    @discardableResult
    public func schedule<Handler: SchedulerTimerHandler>(at date: Date, leeway: Duration, handler: Handler) -> any Disposable {
        BadInput.checkDate(date, method: "SubscriptionScheduler.schedule(at:leeway:handler:)")
        return handlerTarget.schedule(at: date, leeway: leeway, handler: handler)
    }

    /// See ``DateScheduler/schedule(after:repeatingEvery:leeway:handler:)``.
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
            method: "SubscriptionScheduler.schedule(after:repeatingEvery:leeway:handler:)"
        )
        return handlerTarget.schedule(after: delay, repeatingEvery: interval, leeway: leeway, handler: handler)
    }
}
