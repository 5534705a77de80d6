import NIOCore

/// How a channel handler arms its timers on its event loop: the command line's `--timeouts`.
/// Made on the loop's thread, used there only; every action runs on that thread, so it may capture
/// the handler and its `ChannelHandlerContext`.
///
/// The two implementations differ in nothing else, so the server's figures compare the timers:
/// ``EventLoopSchedulerTimers`` (this package's `EventLoopScheduler`, through its isolated view)
/// and ``ScheduledTaskTimers`` (SwiftNIO's `scheduleTask` and `Scheduled.cancel()`).
protocol ChannelTimers {
    /// A one-shot timer: a request's timeout, or the wait of `/slow`.
    associatedtype Timer
    /// The connection's idle timer, pushed back on every read.
    associatedtype IdleTimer

    /// The timers of `eventLoop`; called on its thread.
    init(on eventLoop: any EventLoop)

    /// Runs `action` on the loop once `delay` has passed, unless the timer is cancelled first.
    func schedule(after delay: Duration, _ action: @escaping () -> Void) -> Timer
    /// Cancels `timer`: its action never runs. Nothing happens if it already ran.
    func cancel(_ timer: Timer)

    /// Runs `action` on the loop once `delay` has passed, unless pushed back or cancelled first.
    func scheduleIdle(after delay: Duration, _ action: @escaping () -> Void) -> IdleTimer
    /// Moves `timer`'s deadline to `delay` from now.
    func rearm(_ timer: inout IdleTimer, after delay: Duration)
    /// Cancels `timer`: its action never runs.
    func cancel(_ timer: IdleTimer)
}

/// The command line's `--timeouts` of `NIOTimeoutServer`.
enum LoopTimersMode: String, CaseIterable, Sendable {
    /// ``EventLoopSchedulerTimers``: `context.eventLoop.scheduler.assumeIsolated()`.
    case eventloop
    /// ``ScheduledTaskTimers``: `context.eventLoop.assumeIsolated().scheduleTask(in:_:)`.
    case nio
}
