/// Handler timers go where the subscription scheduler's closure timers go (the current date
/// scheduler, or its background one), as handler timers, so a loop's shutdown still reaches them.
extension SubscriptionScheduler {
    private var handlerTarget: any DateScheduler {
        (Schedulers.current as? any DateScheduler) ?? background
    }

    /// See ``DateScheduler/schedule(_:leeway:handler:)``.
    @discardableResult
    public func schedule(_ start: TimerStart, leeway: Duration, handler: some SchedulerTimerHandler) -> any Disposable {
        handlerTarget.schedule(start, leeway: leeway, handler: handler)
    }

    /// See ``DateScheduler/schedule(_:handler:)``.
    @discardableResult
    public func schedule(_ schedule: PeriodicSchedule, handler: some SchedulerTimerHandler) -> any Disposable {
        handlerTarget.schedule(schedule, handler: handler)
    }

    /// See ``DateScheduler/scheduleRearmable(_:leeway:_:)``: on the current date scheduler, or on
    /// ``background``; the timer re-arms there.
    @discardableResult
    public func scheduleRearmable(
        _ start: TimerStart,
        leeway: Duration,
        _ action: __owned @escaping @Sendable () -> Void
    ) -> any RearmableTimer {
        handlerTarget.scheduleRearmable(start, leeway: leeway, consume action)
    }

    /// See ``DateScheduler/scheduleRearmable(_:leeway:handler:)``.
    @discardableResult
    public func scheduleRearmable(
        _ start: TimerStart,
        leeway: Duration,
        handler: some SchedulerTimerHandler
    ) -> any RearmableTimer {
        handlerTarget.scheduleRearmable(start, leeway: leeway, handler: handler)
    }
}
