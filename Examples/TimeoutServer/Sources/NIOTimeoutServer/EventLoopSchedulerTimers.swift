import NIOCore
import Scheduling
import SchedulingNIO

/// Timers in the loop's `EventLoopScheduler`, through the view it offers on its own thread: a
/// schedule and a dispose are O(1) with no lock; an idle timer is re-armed in place (to a later
/// deadline: a write of the deadline, no allocation, no wake-up).
struct EventLoopSchedulerTimers: ChannelTimers {
    private let scheduler: EventLoopScheduler.Isolated

    init(on eventLoop: any EventLoop) {
        scheduler = eventLoop.scheduler.assumeIsolated()
    }

    func schedule(after delay: Duration, _ action: @escaping () -> Void) -> any Disposable {
        scheduler.schedule(after: delay, action)
    }

    func cancel(_ timer: any Disposable) {
        timer.dispose()
    }

    func scheduleIdle(after delay: Duration, _ action: @escaping () -> Void) -> any RearmableTimer {
        scheduler.scheduleRearmable(after: delay, action)
    }

    func rearm(_ timer: inout any RearmableTimer, after delay: Duration) {
        timer.rearm(after: delay)
    }

    func cancel(_ timer: any RearmableTimer) {
        timer.dispose()
    }
}
