/// A scheduler whose monotonic time is not the system's: virtual on ``TestScheduler``, an
/// injected clock on a loop under test. Package-level: the async views (`clock`, OpenCombine's
/// `SchedulerTimeType`) read time through it so they agree with the scheduler's timers.
package protocol MonotonicTimeSource: AnyObject, Sendable {
    /// The scheduler's monotonic time in nanoseconds: the clock its `after:` timers are measured on.
    var monotonicNanoseconds: Int64 { get }
}

extension DateScheduler {
    /// The clock this scheduler's `after:` timers run on, in nanoseconds: virtual time on a
    /// ``TestScheduler``, `CLOCK_MONOTONIC` on every real scheduler.
    package var monotonicNanoseconds: Int64 {
        if let source = self as? any MonotonicTimeSource { return source.monotonicNanoseconds }
        return Nanoseconds.monotonicNow()
    }
}

extension TestScheduler: MonotonicTimeSource {
    /// Virtual time.
    package var monotonicNanoseconds: Int64 { virtualNanoseconds }
}
