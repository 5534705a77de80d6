#if OpenCombine
import OpenCombine
import Scheduling

/// A ``Scheduling/DateScheduler`` seen as an OpenCombine `Scheduler`: `receive(on:)`, `debounce`,
/// `throttle`, `delay`, `timeout`, `measureInterval` and timer-like publishers run on it.
///
/// ```swift
/// let loop = try LoopScheduler(name: "ui")
/// let cancellable = searchText
///     .debounce(for: .milliseconds(300), scheduler: loop.combine)
///     .sink { query in search(query) }
/// ```
///
/// A view rather than a conformance of the scheduler itself: Combine's `Scheduler` requires `now`
/// of its own time type, which cannot sit beside the scheduler's `now: Date`.
///
/// - Time is the scheduler's monotonic clock in nanoseconds — the clock its `after:` timers run
///   on: `CLOCK_MONOTONIC` on real schedulers, virtual time on a `TestScheduler`, so
///   OpenCombine's operators run on virtual time there and tests advance it with
///   `advance(by:)`. `SchedulerTimeType` is nested in the generic view, so an instant of one
///   scheduler kind cannot be handed to another kind's view by mistake. Instants of two
///   schedulers of the same real kind share one clock; two `TestScheduler`s do not.
/// - Actions run as the base scheduler runs its own: on its thread, with it current, in its
///   order. Disposal races, shutdown and the never-early rule are the base scheduler's.
/// - Combine hands the scheduler non-`Sendable` closures; the publisher that schedules them owns
///   their synchronization (as with Combine's own `DispatchQueue` scheduler), and this view only
///   carries them to the base scheduler.
///
/// - The view holds `base` strongly, and OpenCombine's operators keep their scheduler in the
///   actions they schedule: a pending timer keeps a loop alive (dropping it does not shut it down)
///   until the timer fires or is cancelled, or `LoopScheduler.shutdown()` runs.
///
/// To use a scheduler held as `any DateScheduler`, open it in a generic function:
/// `func view<S: DateScheduler>(_ s: S) -> CombineScheduler<S> { s.combine }`.
public struct CombineScheduler<Base: DateScheduler>: OpenCombine.Scheduler, Sendable {
    /// No options: every action is scheduled the same way.
    public typealias SchedulerOptions = Never

    /// The scheduler this view schedules on.
    public let base: Base

    /// A view of `base`; the same as `base.combine`.
    public init(_ base: Base) {
        self.base = base
    }

    /// The base scheduler's monotonic (or virtual) time now.
    ///
    /// Read twice it never goes backwards. On a real scheduler it is read on the calling thread,
    /// so it can be a little later than the time an action being run was due.
    public var now: SchedulerTimeType {
        SchedulerTimeType(nanoseconds: base.monotonicNanoseconds)
    }

    /// Zero: one-shot actions are never run early and tolerance is never needed for them.
    public var minimumTolerance: SchedulerTimeType.Stride { .zero }

    /// Runs `action` on the base scheduler as soon as possible (its `Scheduler.schedule(_:)`).
    ///
    /// After the base scheduler shut down the action never runs (the scheduler refuses it).
    public func schedule(options: Never?, _ action: @escaping () -> Void) {
        let action = CombineAction(action)
        base.schedule { action.run() }
    }

    /// Runs `action` on the base scheduler no earlier than `date`.
    ///
    /// `tolerance` is accepted and not used: the base scheduler's one-shot timers have no leeway,
    /// and a timer never fires early. A `date` already past runs as soon as possible; an instant
    /// at the end of time (a saturated stride) stays pending.
    ///
    /// - Note: The delay is measured from `now` read here, and the base scheduler reads its
    ///   clock again when the timer is armed, later: so the action never runs before `date`.
    public func schedule(
        after date: SchedulerTimeType,
        tolerance: SchedulerTimeType.Stride,
        options: Never?,
        _ action: @escaping () -> Void
    ) {
        let action = CombineAction(action)
        base.schedule(after: delay(until: date)) { action.run() }
    }

    /// Runs `action` first no earlier than `date`, then every `interval`, on the base scheduler's
    /// fixed-rate periodic timer (ticks on the grid `date + k·interval`, never a burst to catch
    /// up); `tolerance` becomes the timer's leeway.
    ///
    /// - Returns: an `AnyCancellable`: cancelling it, or dropping the last reference to it, disposes
    ///   the timer (a tick already running completes; no tick starts after `cancel()` returns on
    ///   the scheduler's own thread, or after the base scheduler's disposal race elsewhere).
    /// - Important: `interval` must be positive and `tolerance` not negative: anything else stops
    ///   the program, naming the method and the value.
    public func schedule(
        after date: SchedulerTimeType,
        interval: SchedulerTimeType.Stride,
        tolerance: SchedulerTimeType.Stride,
        options: Never?,
        _ action: @escaping () -> Void
    ) -> any Cancellable {
        let method = "CombineScheduler.schedule(after:interval:tolerance:options:)"
        if interval.nanoseconds <= 0 {
            fatalError("\(method): interval must be positive (got \(interval.nanoseconds) ns)")
        }
        if tolerance.nanoseconds < 0 {
            fatalError("\(method): tolerance must not be negative (got \(tolerance.nanoseconds) ns)")
        }
        let action = CombineAction(action)
        let timer = base.schedule(
            after: delay(until: date),
            repeatingEvery: .nanoseconds(interval.nanoseconds),
            leeway: .nanoseconds(tolerance.nanoseconds)
        ) { action.run() }
        return AnyCancellable { timer.dispose() }
    }

    /// The delay from now to `date`, saturating; negative when `date` is past (the base scheduler
    /// runs it as soon as possible).
    private func delay(until date: SchedulerTimeType) -> Duration {
        .nanoseconds(Nanoseconds.subtracting(date.nanoseconds, base.monotonicNanoseconds))
    }
}

extension DateScheduler {
    /// This scheduler as an OpenCombine `Scheduler` (see ``CombineScheduler``).
    ///
    /// Cheap: a struct holding the scheduler; make one wherever an operator needs it.
    public var combine: CombineScheduler<Self> {
        CombineScheduler(self)
    }
}

/// A Combine action carried to a scheduler that takes `@Sendable` closures.
// @unchecked: Combine's `Scheduler` contract hands a non-Sendable closure to the scheduler to run
// on its own context; the publisher that scheduled it synchronizes what it captures (Combine's
// DispatchQueue scheduler relies on the same), and this box only moves it, running it once per fire.
private struct CombineAction: @unchecked Sendable {
    let run: () -> Void

    init(_ run: @escaping () -> Void) {
        self.run = run
    }
}
#endif
