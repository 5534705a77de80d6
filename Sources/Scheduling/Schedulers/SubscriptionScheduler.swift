import Foundation

/// Runs an action at once when there is a current scheduler, otherwise on a background
/// ``QueueScheduler`` of its own (RACSubscriptionScheduler).
///
/// Use it to start work "here if we are already on a scheduler, somewhere otherwise". When it runs
/// an action inline, ``Schedulers/current`` stays what it was. Its timers go to the current scheduler
/// when that is a ``DateScheduler``, otherwise to its background scheduler, so they run as that
/// scheduler's actions.
public final class SubscriptionScheduler: DateScheduler {
    /// Where work goes when there is no current scheduler.
    public let background: QueueScheduler

    /// Use ``Schedulers/subscription``, or make one with its own background queue.
    public init(background: QueueScheduler = QueueScheduler(name: "SubscriptionScheduler")) {
        self.background = background
    }

    /// The wall clock.
    public var now: Date { Date() }

    private var target: any DateScheduler {
        (Schedulers.current as? any DateScheduler) ?? background
    }

    /// Runs `action` now if there is a current scheduler (returning an already-disposed disposable),
    /// otherwise schedules it on ``background``.
    @discardableResult
    public func schedule(_ action: __owned @escaping @Sendable () -> Void) -> any Disposable {
        guard Schedulers.current != nil else { return background.schedule(consume action) }
        action()
        return Disposables.disposed
    }

    /// Schedules on the current date scheduler, or on ``background``.
    @discardableResult
    public func schedule(after delay: Duration, _ action: __owned @escaping @Sendable () -> Void) -> any Disposable {
        target.schedule(after: delay, consume action)
    }

    /// Schedules on the current date scheduler, or on ``background``.
    @discardableResult
    public func schedule(at date: Date, _ action: __owned @escaping @Sendable () -> Void) -> any Disposable {
        BadInput.checkDate(date, method: "SubscriptionScheduler.schedule(at:)")
        return target.schedule(at: date, consume action)
    }

    /// Schedules on the current date scheduler, or on ``background``.
    @discardableResult
    public func schedule(_ schedule: PeriodicSchedule, _ action: __owned @escaping @Sendable () -> Void) -> any Disposable {
        target.schedule(schedule, consume action)
    }
}
