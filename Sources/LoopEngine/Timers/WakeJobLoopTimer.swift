#if compiler(>=6.3) && ExperimentalExecutors && os(Linux)
// The package trait ExperimentalExecutors (off by default): see SleepWakeJob in module Scheduling.
// Linux only: `wakeDeadline` reads a `SuspendingClock` instant as `CLOCK_MONOTONIC`, which it is on
// Linux alone (Darwin's is `CLOCK_UPTIME_RAW`).
import Scheduling

/// The wake-up of a plain `Task.sleep` on the loop: a timer entry holding the runtime's wake job
/// itself, no closure (trait `ExperimentalExecutors`; ``LoopScheduler``'s `SchedulingExecutor`
/// conformance makes it).
///
/// It takes a timer's whole path (``TimerDriver``): filed in the ``DeadlineStore``, wheel and heap,
/// with the sleep's tolerance as its leeway, through the ``RemoteQueue`` as ``LoopItem/timer(_:)``
/// from another thread; fired when due by the loop's monotonic clock, never early, and counted in
/// the statistics as any timer. Firing runs the job on the default executor's identity
/// (`SleepWakeJob.run`).
///
/// A wake job is never dropped nor run early: when the loop disposes it at shutdown, or refuses it
/// because it shut down, ``cancelledByScheduler()`` hands the job to Dispatch with its deadline
/// (`SleepWakeJob.runOnDispatch`). Nobody else disposes it: the entry is never handed out.
///
/// Once fired it is not recycled (``LoopEntryRecycler`` reuses plain closure timers only).
@available(macOS 26.4, iOS 26.4, watchOS 26.4, tvOS 26.4, visionOS 26.4, *)
// Safe as LoopTimer: `job`, like `action`, belongs to whoever wins the entry out of `pending`.
package final class WakeJobLoopTimer: LoopTimer, @unchecked Sendable {
    @exclusivity(unchecked) private var job: UnownedJob?
    private let wakeLeeway: Int64

    init(core: LoopCore, deadline: Int64, leeway: Int64, job: UnownedJob) {
        self.job = job
        self.wakeLeeway = leeway
        super.init(core: core, deadline: deadline, isWall: false, action: nil)
    }

    package override var leeway: Int64 { job == nil ? 0 : wakeLeeway }

    override func fireHandler() {
        guard let job = job.take() else { return }
        SleepWakeJob.run(job)
    }

    override func cancelledByScheduler() {
        guard let job = job.take(), let core else { return }
        SleepWakeJob.runOnDispatch(job, atMonotonic: core.systemMonotonicDeadline(deadlineBeforePublication))
    }
}

@available(macOS 26.4, iOS 26.4, watchOS 26.4, tvOS 26.4, visionOS 26.4, *)
extension LoopCore {
    /// Files a wake job due at `deadline` (the loop's monotonic nanoseconds), up to `leeway` late.
    /// Refused after shutdown began, it goes to Dispatch with its deadline (see ``WakeJobLoopTimer``).
    func enqueueWake(_ job: UnownedJob, deadline: Int64, leeway: Int64) {
        _ = scheduleTimer(WakeJobLoopTimer(core: self, deadline: deadline, leeway: leeway, job: job))
    }

    /// Files the wake job of a sleep until `instant` of `clock` (`SchedulingExecutor`'s
    /// `enqueue(_:at:tolerance:clock:)`), with `tolerance` as its leeway.
    package func enqueueWake<C: Clock>(_ job: UnownedJob, at instant: C.Instant, tolerance: C.Duration?, clock: C) {
        let leeway = SleepWakeJob.leeway(tolerance, clock: clock)
        enqueueWake(job, deadline: wakeDeadline(at: instant, clock: clock), leeway: leeway)
    }

    /// Files the wake job of a sleep of `delay` of `clock`, counted from now on the loop's
    /// monotonic clock (`SchedulingExecutor`'s `enqueue(_:after:tolerance:clock:)`).
    package func enqueueWake<C: Clock>(_ job: UnownedJob, after delay: C.Duration, tolerance: C.Duration?, clock: C) {
        let leeway = SleepWakeJob.leeway(tolerance, clock: clock)
        let delay = max(0, SleepWakeJob.nanoseconds(delay, clock: clock))
        enqueueWake(job, deadline: Nanoseconds.adding(monotonicNow(), delay), leeway: leeway)
    }

    /// The deadline of a sleep until `instant` of `clock`, on the loop's monotonic clock.
    /// `SuspendingClock` is `CLOCK_MONOTONIC` on Linux, the loop's own clock: its instant is the
    /// deadline as it is. Any other clock (`ContinuousClock`, `CLOCK_BOOTTIME`, included) counts
    /// from its own now, read before the loop's, so the conversion errs late, never early; across
    /// a system suspend a `ContinuousClock` sleep fires late by the time suspended.
    func wakeDeadline<C: Clock>(at instant: C.Instant, clock: C) -> Int64 {
        if usesSystemClock, let instant = instant as? SuspendingClock.Instant {
            return Nanoseconds.of(SuspendingClock().systemEpoch.duration(to: instant))
        }
        let remaining = SleepWakeJob.nanoseconds(until: instant, clock: clock)
        return Nanoseconds.adding(monotonicNow(), remaining)
    }

    /// A deadline of the loop's clock on the system's `CLOCK_MONOTONIC` (the same clock unless a
    /// test injected another).
    func systemMonotonicDeadline(_ deadline: Int64) -> Int64 {
        guard !usesSystemClock else { return deadline }
        let remaining = max(0, Nanoseconds.subtracting(deadline, monotonicNow()))
        return Nanoseconds.adding(Nanoseconds.monotonicNow(), remaining)
    }
}
#endif
