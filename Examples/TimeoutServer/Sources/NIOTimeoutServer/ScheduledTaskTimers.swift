import NIOCore

/// SwiftNIO's own timers, as a handler writes them today: `scheduleTask` on the loop's isolated
/// view, `Scheduled.cancel()` (a linear search of the loop's queue of scheduled tasks, under its
/// lock), and an idle timer pushed back by cancelling it and scheduling a new one.
struct ScheduledTaskTimers: ChannelTimers {
    /// The idle timer: the scheduled task, and the action to schedule again at a re-arm.
    struct IdleTimer {
        var task: Scheduled<Void>
        let action: () -> Void
    }

    private let eventLoop: NIOIsolatedEventLoop

    init(on eventLoop: any EventLoop) {
        self.eventLoop = eventLoop.assumeIsolated()
    }

    func schedule(after delay: Duration, _ action: @escaping () -> Void) -> Scheduled<Void> {
        eventLoop.scheduleTask(in: TimeAmount(delay), action)
    }

    func cancel(_ timer: Scheduled<Void>) {
        timer.cancel()
    }

    func scheduleIdle(after delay: Duration, _ action: @escaping () -> Void) -> IdleTimer {
        IdleTimer(task: schedule(after: delay, action), action: action)
    }

    func rearm(_ timer: inout IdleTimer, after delay: Duration) {
        timer.task.cancel()
        timer.task = schedule(after: delay, timer.action)
    }

    func cancel(_ timer: IdleTimer) {
        timer.task.cancel()
    }
}
