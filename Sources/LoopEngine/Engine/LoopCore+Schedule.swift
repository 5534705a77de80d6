import Foundation
@_spi(SchedulerEngine) import Scheduling

/// What a public scheduler on this engine forwards its calls to (`LoopScheduler`, the scheduler on a
/// SwiftNIO event loop): one call per public method, which makes the entry (a recycled one on the
/// loop thread), reads its first deadline from the right clock now and submits it. Bad input is
/// the caller's to check, with its own type's name in the message.
extension LoopCore {
    /// A task, as soon as possible. Returns the entry, or an already-disposed disposable once
    /// shutdown began.
    package func scheduleTask(_ action: __owned @escaping @Sendable () -> Void) -> any Disposable {
        schedule(consume action)
    }

    /// A one-shot closure timer due `delay` after this call on the monotonic clock.
    package func scheduleTimer(after delay: Duration, _ action: __owned @escaping @Sendable () -> Void) -> any Disposable {
        let deadline = DeadlineStore.deadline(after: delay, now: monotonicNow())
        return scheduleTimer(makeTimer(deadline: deadline, isWall: false, action: consume action))
    }

    /// A one-shot closure timer due when the wall clock reaches `date` (finite: checked by the caller).
    package func scheduleTimer(at date: Date, _ action: __owned @escaping @Sendable () -> Void) -> any Disposable {
        scheduleTimer(makeTimer(deadline: Nanoseconds.sinceEpoch(date), isWall: true, action: consume action))
    }

    /// A one-shot handler timer: the handler is stored in the entry, no closure context.
    package func scheduleTimer(_ start: TimerStart, leeway: Duration, handler: some SchedulerTimerHandler) -> any Disposable {
        scheduleTimer(handlerTimer(start, leeway: leeway, handler: handler))
    }

    /// A re-armable closure timer without leeway (with leeway the caller wraps the closure in a
    /// handler): the entry is the handle.
    package func scheduleRearmable(_ start: TimerStart, _ action: __owned @escaping @Sendable () -> Void) -> any RearmableTimer {
        let (deadline, isWall) = firstDeadline(start)
        return scheduleRearmableTimer(makeTimer(deadline: deadline, isWall: isWall, action: consume action))
    }

    /// A re-armable handler timer: the handler stays in the entry across re-arms.
    package func scheduleRearmable(_ start: TimerStart, leeway: Duration, handler: some SchedulerTimerHandler) -> any RearmableTimer {
        scheduleRearmableTimer(handlerTimer(start, leeway: leeway, handler: handler))
    }

    /// The one path of every periodic timer (closure, missed-tick count, handler): makes the entry,
    /// its first deadline read from the right clock now, and queues it. `cancelledByScheduler` is
    /// set before the entry is queued, so a loop that already shut down and refuses the timer
    /// still calls it.
    package func schedulePeriodic(
        _ schedule: PeriodicSchedule,
        tick: @escaping @Sendable (_ missedTicks: Int) -> Void,
        cancelledByScheduler: (@Sendable () -> Void)? = nil
    ) -> any Disposable {
        let (deadline, isWall) = firstDeadline(schedule.start)
        let timer = PeriodicLoopTimer(
            core: self,
            deadline: deadline,
            isWall: isWall,
            interval: schedule.intervalNanoseconds,
            leeway: schedule.leewayNanoseconds,
            tick: tick
        )
        timer.onCancelledByScheduler = cancelledByScheduler
        return scheduleTimer(timer)
    }

    /// A timer's first deadline, read from its clock now: monotonic nanoseconds, or wall-clock
    /// nanoseconds since 1970 (then `isWall`).
    func firstDeadline(_ start: TimerStart) -> (deadline: Int64, isWall: Bool) {
        switch start {
        case .after(let delay): (DeadlineStore.deadline(after: delay, now: monotonicNow()), false)
        case .at(let date): (Nanoseconds.sinceEpoch(date), true)
        }
    }

    /// A one-shot entry holding `handler`, due at `start` (plain or re-armable: the same entry).
    func handlerTimer<Handler: SchedulerTimerHandler>(
        _ start: TimerStart,
        leeway: Duration,
        handler: Handler
    ) -> HandlerLoopTimer<Handler> {
        let (deadline, isWall) = firstDeadline(start)
        return HandlerLoopTimer(core: self, deadline: deadline, isWall: isWall, leeway: Nanoseconds.of(leeway), handler: handler)
    }

    // MARK: What the public object reads

    /// The monotonic clock's reading, in nanoseconds (the scheduler's `clock.now`).
    package var monotonicNanoseconds: Int64 { monotonicNow() }

    /// The wall clock, as the scheduler reads it.
    package var wallClockDate: Date { Date(timeIntervalSince1970: Double(wallNow()) / 1e9) }

    /// The counters as last published.
    package var statisticsSnapshot: LoopReporter.Counts { reporter.published.snapshot }

    /// The public object: the task executor its task jobs run on, and the scheduler its batches
    /// make current (weakly). Called once, right after `init`.
    package func bind(publicObject scheduler: some Scheduler & TaskExecutor) {
        currentBox.scheduler = scheduler
        taskExecutor = scheduler.asUnownedTaskExecutor()
    }

    /// The executor actors pinned to the scheduler use.
    package var actorExecutorReference: UnownedSerialExecutor { unownedActorExecutor }

    /// A task job, into the scheduler's FIFO (or the fallback after it closed).
    package func enqueueTaskJob(_ job: UnownedJob) {
        enqueue(.taskJob(job))
    }

    /// An actor job, into the scheduler's FIFO (or the fallback after it closed).
    package func enqueueActorJob(_ job: UnownedJob) {
        enqueue(.actorJob(job))
    }

    /// Whether the loop accepts tasks and timers (not shutting down, not closed).
    package var isOpen: Bool { lifecycle.isOpen }

    #if compiler(>=6.3) && ExperimentalExecutors
    /// Whether a task or job may wait in the cross-thread queue (a hint, read without the lock).
    package var mayHoldWork: Bool { remote.mayHoldWork }
    #endif

    /// Timers in the store, on the loop thread.
    package var timerCount: Int { timers.count }

    /// The loop that runs the engine.
    package var loopDriver: any LoopDriver { driver }
}
