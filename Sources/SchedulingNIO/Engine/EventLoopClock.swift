#if NIO
import NIOCore
@_spi(SchedulerEngine) import Scheduling

/// The clocks of a scheduler on a SwiftNIO event loop: monotonic time is the loop's own
/// (`eventLoop.now`: `NIODeadline.now()` on SwiftNIO's event loops, virtual time on its testing
/// loops), so deadlines and the callbacks that wake them are on one clock; wall-clock time is the
/// system's.
// The loop is held weakly (the scheduler never keeps its loop alive); weak loads are atomic.
final class EventLoopClock: ClockSource, @unchecked Sendable {
    private weak var eventLoop: (any EventLoop)?

    init(_ eventLoop: any EventLoop) {
        self.eventLoop = eventLoop
    }

    /// The loop's now; once the loop is gone, the system's monotonic clock (nothing fires any more).
    func monotonicNow() -> Int64 {
        guard let eventLoop else { return Nanoseconds.monotonicNow() }
        return Int64(clamping: eventLoop.now.uptimeNanoseconds)
    }

    func wallNow() -> Int64 { Nanoseconds.wallNow() }
}
#endif
