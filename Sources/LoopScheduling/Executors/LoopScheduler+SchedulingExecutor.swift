#if compiler(>=6.3) && ExperimentalExecutors && os(Linux)
// The package trait ExperimentalExecutors (off by default): Swift's unsettled executor SPIs, which
// the next toolchain may not compile. Without the trait nothing of this file is compiled.
@_spi(ExperimentalScheduling) import _Concurrency
import LoopEngine
import Scheduling

/// `Task.sleep` served by the loop (trait `ExperimentalExecutors`, <doc:ExperimentalExecutors>).
///
/// In a task that prefers the loop, a plain `Task.sleep(for:)`, `Task.sleep(until:)` or
/// `clock.sleep(for:)` on `ContinuousClock` or `SuspendingClock` — the caller's own, or a
/// library's — wakes from the loop's timers instead of Dispatch's: its wake-up is one of the
/// loop's timers, counted in ``LoopScheduler/statistics`` as any timer, never early, with the
/// sleep's tolerance as its leeway.
///
/// ```swift
/// let loop = try LoopScheduler(name: "io")
/// try await Task(executorPreference: loop) {
///     try await Task.sleep(for: .milliseconds(10))   // one of the loop's timers
/// }.value
/// ```
///
/// The wake-up is never dropped and never early, also when the loop shuts down first: pending
/// wake-ups, and those of sleeps begun after the shutdown, wake their sleepers at their deadlines
/// from Dispatch's global queue.
///
/// - Note: the executor is never told of a cancelled sleep: its wake-up stays pending, counted
///   in `timersPending` and holding about half a kilobyte, until its deadline. Code that cancels
///   sleeps often uses the loop's own `sleep(for:)` (module `Scheduling`), which frees a cancelled
///   sleep at once.
@_spi(ExperimentalScheduling)
@available(macOS 26.4, iOS 26.4, watchOS 26.4, tvOS 26.4, visionOS 26.4, *)
extension LoopScheduler: SchedulingExecutor {
    /// Files the wake-up of a sleep until `instant` of `clock` as one of the loop's timers, with
    /// `tolerance` as its leeway. A clock whose `Duration` is not `Swift.Duration` stops the
    /// program with a message naming it.
    public func enqueue<C: Clock>(
        _ job: consuming ExecutorJob,
        at instant: C.Instant,
        tolerance: C.Duration?,
        clock: C
    ) {
        core.enqueueWake(UnownedJob(job), at: instant, tolerance: tolerance, clock: clock)
    }

    /// Files the wake-up of a sleep of `delay` of `clock`, counted from now on the loop's
    /// monotonic clock, as one of the loop's timers.
    public func enqueue<C: Clock>(
        _ job: consuming ExecutorJob,
        after delay: C.Duration,
        tolerance: C.Duration?,
        clock: C
    ) {
        core.enqueueWake(UnownedJob(job), after: delay, tolerance: tolerance, clock: clock)
    }
}
#endif
