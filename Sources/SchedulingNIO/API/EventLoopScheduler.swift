#if NIO
import Foundation
import LoopEngine
import NIOCore
@_spi(SchedulerEngine) import Scheduling

/// A serial `DateScheduler` on a SwiftNIO event loop: the thread where a channel's handlers run
/// arms and pushes back its timeouts in this package's timer kernel, in O(1), with no lock and no
/// thread hop. Get the one scheduler of a loop from the loop itself, on any thread:
///
/// ```swift
/// let scheduler = context.eventLoop.scheduler
/// let idle = scheduler.scheduleRearmable(after: .seconds(30)) { channel.close(promise: nil) }
/// // on every read, on the loop thread: O(1), allocates nothing, wakes nothing
/// idle.rearm(after: .seconds(30))
/// ```
///
/// It keeps the behaviour contract of module `Scheduling` (the article *The behaviour contract*),
/// with the exceptions the article *SwiftNIO event loops* lists first: its isolation is the whole
/// loop thread, as SwiftNIO's own executor's is; timers keep their order among this scheduler's
/// timers (SwiftNIO's own tasks are another queue); a wall-clock timer sees a step of the clock
/// at its next wake-up, at the latest a second later; and the loop's shutdown reaches it only on
/// SwiftNIO's own event loops (`MultiThreadedEventLoopGroup`), not on the testing loops, where a
/// test ends it with ``shutdown()``.
///
/// Its timers are filed in the same kernel as a `LoopScheduler`'s — a timing wheel in front of a
/// heap — and wake the loop through SwiftNIO scheduled callbacks: one armed for the earliest
/// deadline the kernel needs, moved only when that must come earlier. Deadlines are read from
/// `eventLoop.now`, so an `EmbeddedEventLoop`'s or `NIOAsyncTestingEventLoop`'s virtual time
/// drives them in tests. Work from the loop thread (a channel handler, an action of this
/// scheduler) takes no lock; from other threads it goes through the scheduler's own queue, one
/// `execute` per wake-up.
///
/// - Important: Timers run on the loop thread: keep their actions short, as a channel handler's.
public final class EventLoopScheduler: DateScheduler {
    /// The scheduler's name (in messages): `EventLoopScheduler`.
    public let name: String
    let core: LoopCore
    let driver: EventLoopDriver

    /// A scheduler on `eventLoop`; the registry (``SchedulingNIO/NIOCore/EventLoop/scheduler``)
    /// makes the one of each loop, then calls ``start()``.
    init(on eventLoop: any EventLoop) {
        let name = "EventLoopScheduler"
        let clock = EventLoopClock(eventLoop)
        var made: EventLoopDriver?
        // `try!`: this driver's set-up cannot fail (it acquires nothing).
        let core = try! LoopCore(
            name: name,
            typeName: "EventLoopScheduler",
            mode: .hosted,
            clock: clock,
            isOnLoopThread: { [weak eventLoop] in eventLoop?.inEventLoop ?? false },
            isolatesWholeThread: true,
            makeDriver: { core in
                let driver = EventLoopDriver(eventLoop: eventLoop, core: core, clock: clock)
                made = driver
                return driver
            }
        )
        self.name = name
        self.core = core
        self.driver = made!
        core.bind(publicObject: self)
    }

    /// Schedules the driver's first callback, on the loop thread (see `EventLoopDriver.start()`).
    func start() {
        guard let eventLoop = driver.eventLoop else { return }
        if eventLoop.inEventLoop {
            driver.start()
        } else {
            let driver = self.driver
            eventLoop.execute { driver.start() }
        }
    }

    /// The event loop the scheduler runs on; nil once the loop is gone (a testing loop the test
    /// released). Held weakly: the scheduler never keeps its loop alive.
    public var eventLoop: (any EventLoop)? { driver.eventLoop }

    /// The wall clock, as the scheduler reads it (the system's: an embedded loop's virtual time
    /// moves only the monotonic clock of `after:` timers). Measure elapsed time with `clock.now`.
    public var now: Date { core.wallClockDate }

    /// Schedules `action` on the loop as soon as possible.
    ///
    /// From the loop thread (a channel handler, one of the scheduler's actions) it runs after the
    /// current code returns, in a later turn of the loop, never inline; from another thread it
    /// runs after the loop's next wake-up. Disposing it before it starts guarantees it never
    /// starts; a `dispose()` racing its start on another thread promises only that.
    @discardableResult
    public func schedule(_ action: __owned @escaping @Sendable () -> Void) -> any Disposable {
        core.scheduleTask(consume action)
    }

    /// Schedules `action` no earlier than `delay` after this call, by the loop's clock
    /// (`eventLoop.now`), at nanosecond resolution. On the loop thread it is O(1) and takes no
    /// lock; disposing it there frees it at once.
    @discardableResult
    public func schedule(after delay: Duration, _ action: __owned @escaping @Sendable () -> Void) -> any Disposable {
        core.scheduleTimer(after: delay, consume action)
    }

    /// Schedules `action` no earlier than the wall clock reaching `date`. A step of the wall clock
    /// is seen at the loop's next wake-up for this scheduler, at the latest a second later. A
    /// non-finite date stops the program.
    @discardableResult
    public func schedule(at date: Date, _ action: __owned @escaping @Sendable () -> Void) -> any Disposable {
        BadInput.checkDate(date, method: "EventLoopScheduler.schedule(at:)")
        return core.scheduleTimer(at: date, consume action)
    }

    /// See `DateScheduler.schedule(_:_:)`: a fixed-rate periodic timer; missed ticks are skipped.
    @discardableResult
    public func schedule(_ schedule: PeriodicSchedule, _ action: __owned @escaping @Sendable () -> Void) -> any Disposable {
        core.schedulePeriodic(schedule, tick: { _ in action() })
    }

    /// See `DateScheduler.schedule(_:leeway:handler:)`: the handler is stored in the timer, no
    /// closure. When the scheduler shuts down, the handler hears `timerCancelledByScheduler()`.
    @discardableResult
    public func schedule(_ start: TimerStart, leeway: Duration, handler: some SchedulerTimerHandler) -> any Disposable {
        core.scheduleTimer(start, leeway: leeway, handler: handler)
    }

    /// See `DateScheduler.schedule(_:handler:)`. When the scheduler shuts down, the handler hears
    /// `timerCancelledByScheduler()`.
    @discardableResult
    public func schedule(_ schedule: PeriodicSchedule, handler: some SchedulerTimerHandler) -> any Disposable {
        core.schedulePeriodic(
            schedule,
            tick: { _ in handler.timerFired() },
            cancelledByScheduler: { handler.timerCancelledByScheduler() }
        )
    }

    /// See `DateScheduler.scheduleRearmable(_:leeway:_:)`: the handle is the timer itself. On the
    /// loop thread a re-arm to a later deadline is O(1), moves nothing and allocates nothing; to an
    /// earlier one it moves the timer at once. From another thread a later deadline is written in
    /// place and wakes nothing; an earlier one reaches the loop as a new timer would.
    @discardableResult
    public func scheduleRearmable(
        _ start: TimerStart,
        leeway: Duration,
        _ action: __owned @escaping @Sendable () -> Void
    ) -> any RearmableTimer {
        BadInput.checkLeeway(leeway, method: "EventLoopScheduler.scheduleRearmable(_:leeway:_:)")
        if leeway > .zero {
            return core.scheduleRearmable(start, leeway: leeway, handler: ActionHandler(fire: action))
        }
        return core.scheduleRearmable(start, consume action)
    }

    /// See `DateScheduler.scheduleRearmable(_:leeway:handler:)`: the handler stays in the timer
    /// across re-arms; when the scheduler shuts down it hears `timerCancelledByScheduler()`.
    @discardableResult
    public func scheduleRearmable(
        _ start: TimerStart,
        leeway: Duration,
        handler: some SchedulerTimerHandler
    ) -> any RearmableTimer {
        BadInput.checkLeeway(leeway, method: "EventLoopScheduler.scheduleRearmable(_:leeway:handler:)")
        return core.scheduleRearmable(start, leeway: leeway, handler: handler)
    }
}

extension EventLoopScheduler {
    /// Timers waiting, as of the loop's last look at its queue (the engine's published count; for
    /// this package's tests and benchmarks).
    package var timersPending: Int { core.statisticsSnapshot.timersPending }

    /// The SwiftNIO callbacks this scheduler has pending on its loop, on the loop thread (for the
    /// tests: a testing loop must hold none when it is released).
    package var pendingWakeUps: Int { driver.pendingCount }
}

extension EventLoopScheduler: MonotonicTimeSource {
    /// The loop's clock (`eventLoop.now`) in nanoseconds: virtual on SwiftNIO's testing loops.
    package var monotonicNanoseconds: Int64 { core.monotonicNanoseconds }
}

/// A closure as a timer handler: a re-armable closure timer with leeway keeps it inline.
private struct ActionHandler: SchedulerTimerHandler {
    let fire: @Sendable () -> Void
    func timerFired() { fire() }
}
#endif
