/// How the timer store is woken.
package enum TimerDriverKind: Sendable {
    /// A `timerfd` on `CLOCK_MONOTONIC`, nanosecond resolution, watched by a `uv_poll_t` (Linux).
    case timerfd
    /// One `uv_timer_t`, millisecond resolution on libuv's cached loop clock: rounded up, and the
    /// store re-checks the monotonic clock before running anything.
    case uvTimer

    /// The best driver for this platform.
    package static var preferred: TimerDriverKind {
        #if os(Linux)
        .timerfd
        #else
        .uvTimer
        #endif
    }
}
