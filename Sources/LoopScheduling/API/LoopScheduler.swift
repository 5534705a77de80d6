import Foundation
import LoopEngine
@_spi(SchedulerEngine) import Scheduling
import Synchronization

/// A serial `DateScheduler` on a libuv loop thread: tasks, one-shot timers (monotonic `after:`
/// and wall-clock `at:`) and fixed-rate periodic timers, with the same behaviour contract as the
/// Dispatch schedulers of module `Scheduling`, cheaper and more precise. Actions run one at a time,
/// in the order they were scheduled from one thread; timers start in deadline order and never
/// early. Disposing before an action starts guarantees it never starts — a `dispose()` racing the
/// start on another thread promises only that — and a timer disposed on the loop thread is freed
/// at once.
///
/// ```swift
/// let loop = try LoopScheduler(name: "timeouts")
/// let timeout = loop.schedule(after: .seconds(30)) { request.fail(.timedOut) }
/// request.onResponse { timeout.dispose() }   // it never runs; its closure is released at once
/// ```
///
/// Three ways to run it (<doc:RunningALoop>): on its own thread (``init(name:)``), on the caller's
/// thread until ``syncShutdown()`` (``run(name:_:)``), or on a host's existing `uv_loop_t`
/// (``init(adopting:)``). Shut it down with `await loop.shutdown()` in async code
/// (``shutdown()``), or ``syncShutdown()`` from synchronous code.
///
/// An actor pinned to the loop runs its methods on the loop thread, and a timer's action that
/// updates the actor's state runs there too: it enters the actor with `assumeIsolated`, with no
/// task per expiry. Generic over `DateScheduler & SerialExecutor`, the same actor runs on a
/// `TestScheduler` in tests:
///
/// ```swift
/// actor Sessions<S: DateScheduler & SerialExecutor> {
///     let scheduler: S
///     var idle: [Int: any RearmableTimer] = [:]
///     init(on scheduler: S) { self.scheduler = scheduler }
///     nonisolated var unownedExecutor: UnownedSerialExecutor { scheduler.asUnownedSerialExecutor() }
///
///     func touch(_ id: Int) {                  // every request pushes the idle timeout back, in place
///         if idle[id]?.rearm(after: .seconds(30)) == true { return }
///         idle[id] = scheduler.scheduleRearmable(after: .seconds(30)) {  // none yet, or it ran
///             self.assumeIsolated { $0.expire(id) }  // on the loop thread, inside the actor
///         }
///     }
///
///     private func expire(_ id: Int) { idle[id] = nil }
/// }
/// ```
///
/// `rearm(after:)` moves a pending timer without allocating (O(1)); it returns `false` once the
/// timer ran or was disposed (here, by the loop's shutdown), and the session schedules a new one.
///
/// Work scheduled from inside an action runs after the current action returns, in the same loop
/// iteration; it never runs inline inside `schedule`. A timer's `after:` delay counts from the
/// call by the monotonic clock, at nanosecond resolution. A timer disposed from another thread
/// releases its closure at once; the loop drops the timer itself at its next look at its queue
/// (within 10 ms).
///
/// - Dropping the last reference shuts the loop down, as ``syncShutdown()`` does. Tasks still queued
///   then run during that shutdown with `Schedulers.current` nil: the scheduler no longer exists
///   to be returned. Hold a reference until ``syncShutdown()`` returns if tasks rely on it.
///
/// ## Implementation
///
/// - Work from other threads goes through one lock into a queue. A task or job wakes the loop
///   unless a wake-up is already pending; a timer due no earlier than the loop's armed wake-up,
///   or a cancellation, does not: the loop looks at its queue within 10 ms while such items keep
///   coming, so a `withTimeout` per request costs the loop about a hundred wake-ups a second
///   rather than two per request. Work scheduled from inside an action goes to a loop-local
///   queue with no lock and no wake-up.
/// - Timer deadlines are nanoseconds of the monotonic clock read when `schedule` is called (not
///   libuv's cached millisecond loop time), kept in the scheduler's own heap ordered by
///   `(deadline, scheduling order)`, and woken by a `timerfd` on Linux. Disposing a timer on the
///   loop thread frees its heap slot and closure at once; from another thread the closure at once
///   and the slot at the loop's next look at its queue.
public final class LoopScheduler: DateScheduler {
    /// The scheduler's name; its thread's name is the first 15 bytes of it (the Linux limit).
    public let name: String
    let core: LoopCore
    /// Set by the first ``claimOnce()``.
    private let claimed = Atomic<Bool>(false)

    /// Starts a loop on a new thread named after the scheduler.
    ///
    /// A loop costs a thread and, on Linux, six file descriptors: libuv's epoll instance, the two
    /// ends of its signal pipe and its wake-up eventfd, and the scheduler's two timerfds (libuv
    /// also opens two, once per process). All are released when the loop closes. So make one
    /// group of loops per process — about one per core, a ``LoopSchedulerGroup`` — and share it,
    /// not a loop per connection or per request: about 3,300 loops use up a limit of 20,000
    /// descriptors (`ulimit -n`).
    ///
    /// - Throws: ``LoopSchedulerError`` naming the call, if the loop, a handle, a timerfd or the
    ///   thread cannot be created (out of file descriptors, at the thread limit). Everything set up
    ///   before the failing step is released first: no fd, thread or memory is left behind.
    public convenience init(name: String = "LoopScheduler") throws {
        try self.init(name: name, mode: .ownThread, adopting: nil, clock: SystemClock(), driver: .preferred)
    }

    /// Starts a loop on a new thread, reporting every loop iteration to `metricsDelegate` on the
    /// loop thread (see ``LoopSchedulerMetricsDelegate``; the `LoopSchedulingMetrics` product turns
    /// it into swift-metrics). Throws as ``init(name:)`` does.
    public convenience init(name: String = "LoopScheduler", metricsDelegate: any LoopSchedulerMetricsDelegate) throws {
        try self.init(
            name: name,
            mode: .ownThread,
            adopting: nil,
            clock: SystemClock(),
            driver: .preferred,
            metricsDelegate: metricsDelegate
        )
    }

    /// Puts the scheduler's handles on a host's running or not-yet-running `uv_loop_t`, which the
    /// host keeps running with `uv_run`.
    ///
    /// Call it on the thread that runs (or will run) the loop: from this call on that thread is the
    /// scheduler's loop thread. libuv is not thread-safe, so initialising handles on a loop from
    /// any other thread would race with the host anyway; a loop that later calls back on another
    /// thread stops the program with a message naming the scheduler. The current scheduler is set
    /// around every action the scheduler runs, and only then: a host's own callbacks on the loop
    /// thread do not see it as current. The scheduler's handles keep `uv_run` from returning until
    /// ``syncShutdown()``, which closes only the scheduler's own handles, never the host's loop.
    ///
    /// ``syncShutdown()`` (or dropping the last reference) on the host's thread, outside the scheduler's
    /// actions, before or after the host's first `uv_run`, runs the accepted tasks, disposes every
    /// timer and starts closing the handles at once, then returns: it never waits for the loop it
    /// is on. The host's next `uv_run` runs the close callbacks and returns once nothing else of its
    /// own is active; `uv_loop_close` then succeeds. From another thread, ``syncShutdown()`` waits until
    /// the host's loop has processed the closing, so the host must keep running it until then.
    ///
    /// On Linux the scheduler adds two file descriptors to the host's loop, its timerfds.
    ///
    /// - Parameter loop: a `uv_loop_t *`, raw so that hosts with their own libuv binding can pass it.
    /// - Throws: ``LoopSchedulerError`` naming the call if a handle or a timerfd cannot be created.
    ///   The handles already initialised are closed; their memory is freed by their close callbacks
    ///   the next time the host runs its loop.
    public convenience init(adopting loop: UnsafeMutableRawPointer) throws {
        try self.init(name: "LoopScheduler", mode: .adopted, adopting: loop, clock: SystemClock(), driver: .preferred)
    }

    /// Runs a loop on the calling thread until ``syncShutdown()``: for a server's main thread.
    ///
    /// `body` runs first, on this thread, with the scheduler current: schedule the first work there
    /// and keep the scheduler (or a way to shut it down) where it is needed. The call returns after
    /// shutdown: every accepted task ran, every timer was disposed and the loop is closed. The loop
    /// holds six file descriptors on Linux, as ``init(name:)``'s does, and no thread of its own.
    public static func run(name: String, _ body: (LoopScheduler) -> Void) throws {
        let scheduler = try LoopScheduler(
            name: name,
            mode: .callerThread,
            adopting: nil,
            clock: SystemClock(),
            driver: .preferred
        )
        scheduler.performAsCurrent { body(scheduler) }
        LibUVEngine.runOwnedLoop(scheduler.core)
    }

    /// For tests and benchmarks: the same, with the clocks, the timer driver and a set-up step to
    /// fail chosen.
    ///
    /// The core is set up (and its thread started) before any stored property of this object is
    /// set, so a failure throws before `deinit` could ever run on a half-made scheduler.
    package init(
        name: String,
        mode: LoopMode,
        adopting loop: UnsafeMutableRawPointer?,
        clock: any ClockSource,
        driver: TimerDriverKind,
        faults: LoopSetUpFaults = .none,
        metricsDelegate: (any LoopSchedulerMetricsDelegate)? = nil
    ) throws {
        let core = try LibUVEngine.make(
            name: name,
            mode: mode,
            adopting: loop,
            clock: clock,
            driver: driver,
            faults: faults,
            metricsDelegate: metricsDelegate
        )
        self.name = name
        self.core = core
        core.bind(publicObject: self)
    }

    /// A loop on its own thread with the given clocks, driver and injected set-up fault.
    package convenience init(
        name: String,
        clock: any ClockSource,
        driver: TimerDriverKind = .preferred,
        faults: LoopSetUpFaults = .none
    ) throws {
        try self.init(name: name, mode: .ownThread, adopting: nil, clock: clock, driver: driver, faults: faults)
    }

    /// Dropping the last reference shuts the loop down as ``syncShutdown()`` does, waiting on a thread
    /// that runs no loop. On a loop thread (its own, or another loop's, which must not wait) nobody
    /// is left to join it, so it detaches.
    deinit {
        LoopShutdown.lastReferenceDropped(core)
    }

    /// The wall clock (as the scheduler reads it), the clock of `at:` timers. Elapsed time, on the
    /// monotonic clock of `after:` timers, is measured with `clock.now` (see `DateScheduler.now`).
    public var now: Date {
        core.wallClockDate
    }

    /// A snapshot of the loop's counters. See ``LoopStatistics``.
    public var statistics: LoopStatistics { LoopStatistics(core.statisticsSnapshot) }

    /// Schedules `action` to run on the loop as soon as possible.
    ///
    /// From inside an action of this scheduler it runs after the current action returns, in the
    /// same loop iteration; from another thread it runs in the loop's next iteration.
    ///
    /// - Returns: a disposable; disposing it before the action starts guarantees it never starts.
    ///   After ``syncShutdown()`` began, an already-disposed disposable, and the action never runs.
    /// - Note: `dispose()` races with the start of the action on the loop thread: it promises only
    ///   that an action which has not started will not start.
    @discardableResult
    public func schedule(_ action: __owned @escaping @Sendable () -> Void) -> any Disposable {
        core.scheduleTask(consume action)
    }

    /// Schedules `action` no earlier than `delay` after this call, by the monotonic clock, at
    /// nanosecond resolution. A non-positive delay runs as soon as possible; a saturated one (such
    /// as `.seconds(Int64.max)`) stays pending, without waking the loop, until disposed.
    @discardableResult
    public func schedule(after delay: Duration, _ action: __owned @escaping @Sendable () -> Void) -> any Disposable {
        core.scheduleTimer(after: delay, consume action)
    }

    /// Schedules `action` no earlier than the wall clock reaching `date`, also when the clock is
    /// stepped after this call (on Linux a `TFD_TIMER_CANCEL_ON_SET` timerfd reports steps; the
    /// wait is re-checked at least once a second anyway). A past date runs as soon as possible;
    /// `Date.distantFuture` stays pending until disposed. A non-finite date stops the program.
    @discardableResult
    public func schedule(at date: Date, _ action: __owned @escaping @Sendable () -> Void) -> any Disposable {
        BadInput.checkDate(date, method: "LoopScheduler.schedule(at:)")
        return core.scheduleTimer(at: date, consume action)
    }

    /// See `DateScheduler.schedule(_:_:)`: a wall-clock start follows the wall clock (stepped
    /// clocks included), the grid after it the monotonic clock. A sub-millisecond interval stays
    /// periodic; ticks never run back to back to catch up.
    @discardableResult
    public func schedule(_ schedule: PeriodicSchedule, _ action: __owned @escaping @Sendable () -> Void) -> any Disposable {
        schedulePeriodic(schedule, tick: { _ in action() })
    }

    /// Like `DateScheduler.schedule(after:repeatingEvery:leeway:_:)`, and tells each tick how
    /// many grid points were skipped just before it because the loop fell behind (0 when on time).
    @discardableResult
    public func schedule(
        after delay: Duration,
        repeatingEvery interval: Duration,
        leeway: Duration = .zero,
        countingMissedTicks action: @escaping @Sendable (_ missedTicks: Int) -> Void
    ) -> any Disposable {
        let call = "schedule(after:repeatingEvery:leeway:countingMissedTicks:)"
        return schedulePeriodic(checkedSchedule(.after(delay), interval, leeway, call: call), tick: action)
    }

    /// The one path of every periodic timer on the loop (closure, missed-tick count, handler).
    func schedulePeriodic(
        _ schedule: PeriodicSchedule,
        tick: @escaping @Sendable (_ missedTicks: Int) -> Void,
        cancelledByScheduler: (@Sendable () -> Void)? = nil
    ) -> any Disposable {
        core.schedulePeriodic(schedule, tick: tick, cancelledByScheduler: cancelledByScheduler)
    }

    /// Shuts the loop down and waits, blocking the calling thread, until it is closed: for
    /// synchronous code (a `deinit`, a plain thread, an action of the loop). Async code awaits
    /// ``shutdown()`` instead.
    ///
    /// Idempotent; callable from any thread, the loop thread included. Tasks accepted by
    /// ``schedule(_:)`` before shutdown began still run; every timer, due or not, is disposed and
    /// never runs (a task awaiting one of this scheduler's sleeps, clocks or timeouts throws
    /// `SchedulerShutdownError`: see the Concurrency article of module `Scheduling`); work scheduled
    /// after shutdown began is refused (an already-disposed disposable). With the
    /// `ExperimentalExecutors` trait, one named exception: the wake-up of a plain `Task.sleep` in a
    /// task that prefers the loop can be neither dropped nor run early, so a pending one, or one
    /// arriving after shutdown began, is handed to Dispatch with its deadline and wakes its sleeper
    /// then (<doc:ExperimentalExecutors>). On a thread that runs no
    /// loop it returns once no action will run again, every closure is released, every handle is
    /// closed, an owned loop's `uv_loop_close` returned 0 and its thread has exited.
    ///
    /// On a loop thread it never blocks: on this loop's thread (from inside an action) it completes
    /// after the current batch of actions, without waiting for itself; on another loop's thread it
    /// begins the shutdown and returns, since waiting there could deadlock two loops that shut
    /// each other down (or two loops of a group both calling ``LoopSchedulerGroup/syncShutdown()``).
    /// Await ``shutdown()`` or call this from a plain thread to know it finished.
    ///
    /// - Note: a pending timer whose closure captures its own scheduler keeps the scheduler alive,
    ///   so dropping your reference then does not shut it down: shut it down yourself. After
    ///   `fork()` the child has no loop thread: a scheduler inherited from the parent is dead in the
    ///   child (schedule nothing on it; do not wait for it).
    @available(*, noasync, message: "blocks the thread: use 'await shutdown()' in async code")
    public func syncShutdown() {
        LoopShutdown.shutdown(core)
    }

    /// Shuts the loop down and suspends until it is closed, without blocking the calling task's
    /// thread: `await loop.shutdown()` in a `main.swift`, a service's `run()` or a test.
    ///
    /// It does what ``syncShutdown()`` does: tasks accepted before shutdown began still run; every
    /// timer is disposed and never runs (a task awaiting one of this scheduler's sleeps, clocks or
    /// timeouts throws `SchedulerShutdownError`); work scheduled after it began is refused. With the
    /// `ExperimentalExecutors` trait, the one exception is the wake-up of a plain `Task.sleep` in a
    /// task that prefers the loop: never dropped nor run early, it wakes its sleeper at its deadline
    /// from Dispatch (<doc:ExperimentalExecutors>). It
    /// returns once no action will run again, every closure is released and the loop is closed.
    ///
    /// Called on this loop's own thread (a job or an action of it) it begins the shutdown and
    /// returns at once: a loop cannot wait for itself. From another loop's thread it does wait:
    /// suspending there blocks nothing.
    public func shutdown() async {
        await LoopShutdown.shutdown(core)
    }

    /// Integrations (a service's `run()`): claims the scheduler once; false if it was claimed before.
    package func claimOnce() -> Bool {
        !claimed.exchange(true, ordering: .acquiringAndReleasing)
    }

    /// Integrations: returns once the loop is closed, however its shutdown began, without blocking
    /// a thread (also when it is closed already).
    package func waitUntilClosed() async {
        await LoopShutdown.untilClosed(core)
    }

    /// Tells the loop the wall clock was stepped, as the realtime timerfd does on Linux; for tests
    /// that step an injected clock.
    package func wallClockDidChange() {
        let core = self.core
        _ = core.scheduleTask { core.wallClockChanged() }
    }
}

extension LoopScheduler: MonotonicTimeSource {
    /// The loop's monotonic clock (an injected one under test).
    package var monotonicNanoseconds: Int64 { core.monotonicNanoseconds }
}
