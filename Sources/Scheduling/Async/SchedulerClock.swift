import Foundation

extension DateScheduler {
    /// This scheduler as a Swift `Clock`, so code generic over
    /// `some Clock<Duration>` (swift-async-algorithms' `debounce`, `throttle`,
    /// `AsyncTimerSequence`, a connection pool) runs on its timers, or on virtual time on a
    /// ``TestScheduler``.
    ///
    /// It is a view rather than a conformance: `Clock` requires a `now` of its own instant type,
    /// which cannot sit beside ``DateScheduler/now`` (a `Date`) on the scheduler.
    public var clock: SchedulerClock<Self> { SchedulerClock(self) }
}

/// A `Clock` served by a ``DateScheduler``: its `now` is the scheduler's monotonic time (virtual on
/// ``TestScheduler``) and its `sleep(until:tolerance:)` is the scheduler's timer.
///
/// ```swift
/// let loop = try LoopScheduler(name: "clock")
/// let start = loop.clock.now
/// try await loop.clock.sleep(until: start.advanced(by: .milliseconds(5)))
/// ```
///
/// On a ``TestScheduler`` its sleeps wake on virtual time, in deadline order, when the test
/// advances the scheduler. What runs after the wake-up has run when `advance` returns if the
/// sleeping task runs on the scheduler: a task that prefers it, an actor pinned to it, the body of
/// ``TestScheduler/drive(_:)``, or a task `drive` took in — any task the body's code started, such
/// as the plain `Task {}` swift-async-algorithms' `debounce` starts per sequence. A task on the
/// global pool outside `drive` is woken on virtual time too, but runs on when the pool gets to it.
/// Only sleeps on this clock are virtual: a `Task.sleep` or a `ContinuousClock` sleep in the same
/// code takes real time. See the Testing article.
public struct SchedulerClock<S: DateScheduler>: Clock {
    public typealias Duration = Swift.Duration

    /// A point on the scheduler's monotonic clock, in nanoseconds (an arbitrary origin: only
    /// differences mean something). Arithmetic saturates rather than trapping.
    public struct Instant: InstantProtocol, Sendable, Hashable, Comparable {
        public typealias Duration = Swift.Duration

        /// Nanoseconds on the scheduler's monotonic clock.
        public let nanoseconds: Int64

        /// The instant `nanoseconds` on the scheduler's monotonic clock.
        public init(nanoseconds: Int64) {
            self.nanoseconds = nanoseconds
        }

        /// This instant moved by `duration`, saturating at the clock's range (a sub-nanosecond
        /// remainder rounds up, so a deadline is never early).
        public func advanced(by duration: Duration) -> Instant {
            Instant(nanoseconds: Nanoseconds.adding(nanoseconds, Nanoseconds.of(duration)))
        }

        /// The duration from this instant to `other` (negative when `other` is earlier), saturating.
        public func duration(to other: Instant) -> Duration {
            .nanoseconds(Nanoseconds.subtracting(other.nanoseconds, nanoseconds))
        }

        public static func < (lhs: Instant, rhs: Instant) -> Bool {
            lhs.nanoseconds < rhs.nanoseconds
        }
    }

    /// The scheduler whose time and timers this clock uses.
    public let scheduler: S

    /// The clock of `scheduler`; same as `scheduler.clock`.
    public init(_ scheduler: S) {
        self.scheduler = scheduler
    }

    /// The scheduler's monotonic time: `CLOCK_MONOTONIC` on real schedulers, virtual time on
    /// ``TestScheduler``.
    public var now: Instant {
        Instant(nanoseconds: scheduler.monotonicNanoseconds)
    }

    /// One nanosecond, the schedulers' resolution; zero on ``TestScheduler``, whose time only moves
    /// when advanced.
    public var minimumResolution: Duration {
        scheduler is TestScheduler ? .zero : .nanoseconds(1)
    }

    /// Suspends until `deadline` on the scheduler's timer, never earlier, up to `tolerance` later
    /// (tolerance becomes the timer's leeway; a negative one counts as zero).
    ///
    /// - Throws: `CancellationError` when the task is cancelled first (the timer is disposed at
    ///   once); ``SchedulerShutdownError`` when the scheduler shuts down first, or had shut down
    ///   before the call. Generic code over `Clock` treats either as the end of its wait (for
    ///   instance, `debounce` ends its sequence). See ``DateScheduler/sleep(for:leeway:)``.
    public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        // The scheduler measures the delay from a clock reading taken after this one, so the timer
        // fires no earlier than `deadline`.
        let delay = now.duration(to: deadline)
        try await scheduler.sleep(for: delay, leeway: max(.zero, tolerance ?? .zero))
    }
}
