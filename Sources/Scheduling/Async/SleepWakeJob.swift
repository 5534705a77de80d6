#if compiler(>=6.3) && ExperimentalExecutors && os(Linux)
// The package trait ExperimentalExecutors (off by default): Swift's unsettled executor SPIs, which
// the next toolchain may not compile. Without the trait nothing of this file is compiled.
@_spi(ExperimentalScheduling) @_spi(ExperimentalCustomExecutors) import _Concurrency
import Dispatch

/// The wake-up of a plain `Task.sleep` handed to a scheduler (trait `ExperimentalExecutors`).
///
/// For a task that prefers an executor conforming to `SchedulingExecutor`, the runtime's sleep
/// hands that executor a wake job — a runtime task of its own, with no executor preference, that
/// resumes the sleeper — with the sleep's deadline, instead of Dispatch's timer. A scheduler files
/// it as a timer and runs it when due, on the default executor's identity (the wake job prefers
/// nothing: run as the scheduler's task executor, it would be sent to the default executor and
/// back). The executor is never told of a cancelled sleep: the job stays until its deadline.
///
/// A wake job is never dropped and never run early: a dropped one leaves a live sleeper suspended
/// forever, one run early returns a live `Task.sleep` early.
@available(macOS 26.4, iOS 26.4, watchOS 26.4, tvOS 26.4, visionOS 26.4, *)
package enum SleepWakeJob {
    /// The default executor, which lives as long as the program.
    private static let defaultExecutor: any TaskExecutor = Task.defaultExecutor
    /// Its identity, which a wake job runs with.
    private static let defaultIdentity: UnownedTaskExecutor = defaultExecutor.asUnownedTaskExecutor()

    /// Runs a due wake job on the calling thread, as the default executor's.
    package static func run(_ job: UnownedJob) {
        job.runSynchronously(on: defaultIdentity)
    }

    /// Nanoseconds from `clock`'s now to `instant`, rounded up, saturating; negative when past.
    /// Read the scheduler's own clock *after* this call: the time between the two readings makes
    /// the deadline later, never earlier.
    package static func nanoseconds<C: Clock>(until instant: C.Instant, clock: C) -> Int64 {
        nanoseconds(clock.now.duration(to: instant), clock: clock)
    }

    /// A duration of `clock` in nanoseconds, rounded up, saturating. Stops the program, naming the
    /// clock, when its `Duration` is not `Swift.Duration` (the runtime never sends one: a custom
    /// clock's sleep is its own).
    package static func nanoseconds<C: Clock>(_ duration: C.Duration, clock: C) -> Int64 {
        guard let duration = duration as? Swift.Duration else { unsupported(clock) }
        return Nanoseconds.of(duration)
    }

    /// A sleep's tolerance as a timer's leeway in nanoseconds: none when nil, never negative.
    package static func leeway<C: Clock>(_ tolerance: C.Duration?, clock: C) -> Int64 {
        guard let tolerance else { return 0 }
        return max(0, nanoseconds(tolerance, clock: clock))
    }

    /// Where a scheduler cannot keep a wake job (a loop that shut down): runs it on Dispatch's
    /// global queue once `CLOCK_MONOTONIC` reaches `deadline`, never before, on the default
    /// executor's identity. A deadline that never comes (a saturated sleep) is never due: nothing
    /// is scheduled.
    package static func runOnDispatch(_ job: UnownedJob, atMonotonic deadline: Int64) {
        guard deadline != Nanoseconds.never else { return }
        let due = DispatchTime(uptimeNanoseconds: UInt64(max(1, deadline)))
        DispatchQueue.global().asyncAfter(deadline: due) {
            // Dispatch's timers do not fire early; the check keeps the promise whatever it does.
            guard Nanoseconds.monotonicNow() >= deadline else {
                runOnDispatch(job, atMonotonic: deadline)
                return
            }
            run(job)
        }
    }

    private static func unsupported<C: Clock>(_ clock: C) -> Never {
        fatalError(
            "Task.sleep on a scheduler: the clock \(C.self) has a Duration of \(C.Duration.self), not Swift.Duration; "
                + "a scheduler serves only sleeps on clocks measured in Swift.Duration"
        )
    }
}

/// A wake job on a scheduler's timer: run when the timer fires.
@available(macOS 26.4, iOS 26.4, watchOS 26.4, tvOS 26.4, visionOS 26.4, *)
struct SleepWakeHandler: SchedulerTimerHandler {
    let job: UnownedJob

    func timerFired() {
        SleepWakeJob.run(job)
    }
}

@available(macOS 26.4, iOS 26.4, watchOS 26.4, tvOS 26.4, visionOS 26.4, *)
extension DateScheduler {
    /// Files a wake job as a one-shot timer of this scheduler: due after the time from `clock`'s
    /// now to `instant` (on a ``TestScheduler``, after that much virtual time), with `tolerance`
    /// as its leeway. (`SchedulingExecutor`'s `enqueue(_:after:tolerance:clock:)`, which the runtime
    /// does not call, comes here through the protocol's own default.)
    func enqueueSleepWake<C: Clock>(_ job: UnownedJob, at instant: C.Instant, tolerance: C.Duration?, clock: C) {
        let delay = SleepWakeJob.nanoseconds(until: instant, clock: clock)
        let leeway = SleepWakeJob.leeway(tolerance, clock: clock)
        schedule(.after(.nanoseconds(delay)), leeway: .nanoseconds(leeway), handler: SleepWakeHandler(job: job))
    }
}

// An SPI conformance to `SchedulingExecutor` implies one to `Executor`, which the compiler may
// attach to the SPI extension (the first in file order) and then refuses to use in the public
// `TaskExecutor` conformances: stated here, plainly, it stays public.
extension TestScheduler: Executor {}
extension QueueScheduler: Executor {}
extension ConcurrentQueueScheduler: Executor {}

/// `Task.sleep` on virtual time (trait `ExperimentalExecutors`): in a task that prefers the test
/// scheduler, a plain `Task.sleep(for:)` comes due after that much virtual time, counted from the
/// scheduler's `now` when the sleep reaches it, and returns inside the `advance` that reaches it.
///
/// ```swift
/// let test = TestScheduler()
/// let task = Task(executorPreference: test) { try await Task.sleep(for: .seconds(5)) }
/// test.advance()                     // the task starts and sleeps
/// test.advance(by: .seconds(5))      // it has returned from its sleep when this returns
/// ```
///
/// The delay is the sleep's deadline less its clock's reading when the sleep reaches the
/// scheduler, so it is short of the requested duration by the microseconds the runtime took to
/// hand it over: advance by the whole duration, as above.
@_spi(ExperimentalScheduling)
@available(macOS 26.4, iOS 26.4, watchOS 26.4, tvOS 26.4, visionOS 26.4, *)
extension TestScheduler: SchedulingExecutor {
    /// Files the wake-up of a `Task.sleep` until `instant` of `clock` as a timer on virtual time.
    public func enqueue<C: Clock>(
        _ job: consuming ExecutorJob,
        at instant: C.Instant,
        tolerance: C.Duration?,
        clock: C
    ) {
        enqueueSleepWake(UnownedJob(job), at: instant, tolerance: tolerance, clock: clock)
    }
}

/// `Task.sleep` served by the queue's timers (trait `ExperimentalExecutors`): in a task that
/// prefers the scheduler, the wake-up of a plain `Task.sleep` is one of its timers.
@_spi(ExperimentalScheduling)
@available(macOS 26.4, iOS 26.4, watchOS 26.4, tvOS 26.4, visionOS 26.4, *)
extension QueueScheduler: SchedulingExecutor {
    /// Files the wake-up of a `Task.sleep` until `instant` of `clock` as one of the queue's timers.
    public func enqueue<C: Clock>(
        _ job: consuming ExecutorJob,
        at instant: C.Instant,
        tolerance: C.Duration?,
        clock: C
    ) {
        enqueueSleepWake(UnownedJob(job), at: instant, tolerance: tolerance, clock: clock)
    }
}

/// `Task.sleep` served by the queue's timers (trait `ExperimentalExecutors`), as on ``QueueScheduler``.
@_spi(ExperimentalScheduling)
@available(macOS 26.4, iOS 26.4, watchOS 26.4, tvOS 26.4, visionOS 26.4, *)
extension ConcurrentQueueScheduler: SchedulingExecutor {
    /// Files the wake-up of a `Task.sleep` until `instant` of `clock` as one of the queue's timers.
    public func enqueue<C: Clock>(
        _ job: consuming ExecutorJob,
        at instant: C.Instant,
        tolerance: C.Duration?,
        clock: C
    ) {
        enqueueSleepWake(UnownedJob(job), at: instant, tolerance: tolerance, clock: clock)
    }
}
#endif
