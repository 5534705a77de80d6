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

    /// How long the runtime may take to hand a sleep over, in nanoseconds, for a whole-millisecond
    /// sleep to be exact on virtual time (``virtualDelay(_:)``): 250 µs. The hand-over took 8–32 µs
    /// in a debug build on a shared 2-core machine (the first sleep of a process the longest), a
    /// few µs in release; the bound leaves room for a loaded machine or a sanitizer, and is the
    /// most a duration that is not a whole number of milliseconds is lengthened.
    package static let handOverBound: Int64 = 250_000

    /// The virtual delay of a sleep whose deadline was `remaining` nanoseconds away by its clock when
    /// it reached a ``TestScheduler``: `remaining` rounded up to the next whole millisecond when that
    /// is at most ``handOverBound`` away, else `remaining` itself.
    ///
    /// The runtime hands over the sleep's deadline (its clock's reading at the call plus the
    /// duration), never the duration, so `remaining` falls short of the duration by the real time
    /// the hand-over took. The rounding only ever lengthens the delay, so the sleep is never due
    /// before its deadline's remaining time; it gives a whole-millisecond duration back exactly when
    /// the hand-over took at most ``handOverBound``, since that duration is then the next whole
    /// millisecond. A duration that is not a whole number of milliseconds comes due either at the
    /// next whole millisecond above it (when that is within ``handOverBound`` less the hand-over)
    /// or, short of it by the hand-over, at `remaining`. Past and saturated deadlines stay as they are.
    package static func virtualDelay(_ remaining: Int64) -> Int64 {
        let millisecond: Int64 = 1_000_000
        guard remaining > 0, remaining <= Int64.max - millisecond else { return remaining }
        let below = remaining % millisecond
        guard below != 0 else { return remaining }
        let roundedUp = remaining - below + millisecond
        return roundedUp - remaining <= handOverBound ? roundedUp : remaining
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
        enqueueSleepWake(job, afterNanoseconds: delay, tolerance: tolerance, clock: clock)
    }

    /// Files a wake job as a one-shot timer of this scheduler due after `delay` nanoseconds.
    func enqueueSleepWake<C: Clock>(_ job: UnownedJob, afterNanoseconds delay: Int64, tolerance: C.Duration?, clock: C) {
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
/// scheduler, a plain `Task.sleep(for:)` of a whole number of milliseconds comes due after exactly
/// that much virtual time, counted from the scheduler's `now` when the sleep reaches it, and
/// returns inside the `advance` that reaches it.
///
/// ```swift
/// let test = TestScheduler()
/// let task = Task(executorPreference: test) { try await Task.sleep(for: .seconds(5)) }
/// test.advance()                                            // the task starts and sleeps
/// test.advance(by: .seconds(5) - .microseconds(1))          // not yet
/// test.advance(by: .microseconds(1))                        // it has returned from its sleep
/// ```
///
/// The runtime hands the scheduler the sleep's deadline, not its duration, and the time left until
/// that deadline when the sleep arrives is short of the duration by the few µs the hand-over took.
/// The scheduler rounds that time left up to the next whole millisecond when it is at most 250 µs
/// below it, and never rounds it down:
///
/// - A whole number of milliseconds (`.seconds(5)`, `.milliseconds(300)`) comes due after exactly
///   that much virtual time, unless the thread was held up for more than 250 µs between the
///   `Task.sleep` call and the hand-over; then it comes due up to that much sooner.
/// - Any other duration comes due at the next whole millisecond above it when that is within
///   250 µs less the hand-over, otherwise a few µs short of it. Sleep on `test` or `test.clock`
///   where a test needs such a duration exactly.
/// - A sleep until an instant comes due after the time left until it when the sleep arrives,
///   rounded the same way.
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
        let remaining = SleepWakeJob.nanoseconds(until: instant, clock: clock)
        let delay = SleepWakeJob.virtualDelay(remaining)
        enqueueSleepWake(UnownedJob(job), afterNanoseconds: delay, tolerance: tolerance, clock: clock)
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
