#if NIO
import LoopEngine
import NIOCore
@_spi(SchedulerEngine) import Scheduling
import Synchronization

/// The loop engine's driver on a SwiftNIO event loop: how the engine (``LoopCore``) is woken and
/// run there. The engine's path of a timer and of a task is the one every loop scheduler has
/// (`LoopEngine`); this type only connects it to SwiftNIO:
///
/// 1. **Wake.** A submission from another thread that needs the loop (the engine's wake rule)
///    calls ``wake()`` under the engine's queue lock: one `execute` of a closure made once, which
///    runs a batch and arms again. So does ``startIdle()`` on the loop thread (work queued
///    outside a batch, a timer due before the armed wake-up, a due timer), once until it ran.
/// 2. **Arm.** At the end of every batch the engine arms its one wake-up (``arm(in:)``): a
///    SwiftNIO scheduled callback at `eventLoop.now` + the delay, unless one already pending comes
///    no later (a wake-up that comes early is harmless: the engine arms again). A pending callback
///    later than the new one is left to fire and be ignored, never cancelled: SwiftNIO's cancel is
///    a linear search under the loop's task lock. Every callback shares one handler object, so an
///    arming allocates nothing of ours.
/// 3. **Fire.** A callback that comes when the armed deadline has passed runs the engine's timer
///    callback and a new arming; one that comes earlier (a later one left behind, now early for
///    the engine's next arming) is ignored.
/// 4. **Shutdown.** SwiftNIO tells nothing when a loop shuts down, except that the scheduled
///    callbacks still pending hear `didCancelScheduledCallback` in the loop's last drain. On a
///    loop with its own callbacks (NIOPosix's `SelectableEventLoop`) one callback therefore stays
///    pending at all times — the armed one, or one at a far horizon while nothing is armed — and
///    its cancellation is the engine's shutdown: it drains, disposes its timers (their handlers
///    hear that the scheduler cancelled them) and closes, on the loop thread, inside that drain.
///    From then on nothing calls into SwiftNIO. On a testing loop (`EmbeddedEventLoop`,
///    `NIOAsyncTestingEventLoop`, whose callbacks are scheduled tasks), a cancellation is
///    `EmbeddedChannel.finish()` emptying the loop, not a shutdown: the engine forgets the armed
///    wake-up (and arms again at its next batch); nothing stays pending while the scheduler is
///    idle, since such a loop must have no scheduled task left when it is released.
// Loop-confined state (`armed`, `pending`, `spare`, `drainPending`, `kind`) is touched only on the
// loop thread; `eventLoop` is a weak reference read from any thread; `closing` is an atomic.
final class EventLoopDriver: LoopDriver, @unchecked Sendable {
    /// What kind of loop this is, learnt from its first scheduled callback: whether SwiftNIO
    /// implements callbacks itself (and cancels them at shutdown), or as scheduled tasks.
    enum Kind {
        case unknown
        /// NIOPosix: callbacks of its own, cancelled in the loop's last drain.
        case ownCallbacks
        /// A testing loop: callbacks are scheduled tasks, cancelled when a test empties the loop.
        case scheduledTasks
    }

    /// Weak: the loop's lifetime is its group's (or its test's); the scheduler never keeps it.
    weak var eventLoop: (any EventLoop)?
    /// The engine; unowned: it owns this driver.
    unowned(unsafe) let core: LoopCore
    /// The one closure every `execute` runs (a batch, then an arming).
    private var drain: (@Sendable () -> Void)!
    private(set) var kind = Kind.unknown
    /// The callbacks scheduled and not yet fired or cancelled, each with its own handler.
    private var pending: [WakeCallback] = []
    /// Handlers of callbacks that fired or were cancelled, reused: an arming allocates nothing once
    /// the loop has had as many callbacks pending at once as it will ever have (two or three).
    private var spare: [WakeCallback] = []
    /// The deadline the engine asked for (or the earlier pending callback taken for it); nil when
    /// nothing is armed.
    private var armed: Int64?
    /// An `execute` of ``drain`` is queued and has not run yet.
    private var drainPending = false
    /// The engine is ending or ended: callbacks and their cancellations are ignored, nothing is
    /// scheduled any more.
    private let closing = Atomic<Bool>(false)

    /// Callbacks pending, on the loop thread.
    var pendingCount: Int { pending.count }

    /// Whether the loop runs on one thread for its whole life (a loop with callbacks of its own:
    /// NIOPosix's). On the loop thread only.
    var isOnOneThread: Bool { kind == .ownCallbacks }

    /// How far ahead the callback stays pending while nothing is armed, on a loop with callbacks of
    /// its own (scheduled again when it comes: an idle hour costs one wake-up).
    static let horizon: Int64 = 3_600_000_000_000

    /// The engine's clock, told when the loop turns out to be one of SwiftNIO's own.
    private let clock: EventLoopClock

    /// What SwiftNIO's queued closures and pending callbacks reach the driver through, weakly: the
    /// weak references point at this small object, not at the driver, whose own retains and
    /// releases (one per `core.driver` call) then stay on the fast path (an object with weak
    /// references keeps its counts in a side table).
    private let link: DriverLink

    init(eventLoop: any EventLoop, core: LoopCore, clock: EventLoopClock) {
        self.eventLoop = eventLoop
        self.core = core
        self.clock = clock
        let link = DriverLink()
        self.link = link
        drain = { [weak link] in link?.driver.runDrain() }
        link.driver = self
    }

    // MARK: LoopDriver

    /// SwiftNIO has no hook before its loop blocks: the engine arms at the end of each batch, and
    /// asks for a batch when a timer filed outside one needs an earlier wake-up.
    var preparesBeforeEveryBlock: Bool { false }

    /// No cached loop clock to read for the metrics' sleep time.
    var loopTimeMillis: UInt64? { nil }

    /// From any thread, under the engine's queue lock: one `execute` of the drain.
    func wake() {
        guard !closing.load(ordering: .relaxed), let eventLoop else { return }
        eventLoop.execute(drain)
    }

    /// On the loop thread: one `execute` of the drain, until it ran.
    func startIdle() {
        guard !drainPending, !closing.load(ordering: .relaxed), let eventLoop else { return }
        drainPending = true
        eventLoop.execute(drain)
    }

    /// Nothing to stop: a queued drain that finds nothing to do costs one empty batch.
    func stopIdle() {}

    func arm(in nanoseconds: Int64) {
        guard !closing.load(ordering: .relaxed), let eventLoop else { return }
        let now = Int64(clamping: eventLoop.now.uptimeNanoseconds)
        let target = Nanoseconds.adding(now, max(1, nanoseconds))
        // A pending callback that comes no later serves: the latest such, to wake as late as allowed.
        var serving: Int64?
        for callback in pending where callback.deadline <= target {
            serving = max(serving ?? callback.deadline, callback.deadline)
        }
        armed = serving ?? target
        if serving == nil { schedule(at: target, on: eventLoop) }
    }

    /// A testing loop must hold no scheduled task when a test releases it: with no timer left, the
    /// callbacks still pending are cancelled. (A loop with callbacks of its own keeps one.)
    func timersEmptied() {
        guard kind == .scheduledTasks, !pending.isEmpty else { return }
        cancelPending()
        core.armedWakeLost()
    }

    /// Set-up never fails after the driver is made.
    func releaseAfterFailedSetUp() {}

    /// The engine ends (shutdown's last step, on the loop thread): the callbacks still pending are
    /// cancelled (none when SwiftNIO's last drain is what ends it: it cancels them itself), and the
    /// engine is closed now: nothing of SwiftNIO's holds it any more.
    func closeAll() {
        closing.store(true, ordering: .relaxed)
        cancelPending()
        LoopShutdown.handlesClosed(core)
    }

    // MARK: Set-up

    /// On the loop thread, once, right after the engine was made: the first scheduled callback,
    /// at the horizon, which tells what kind of loop this is. On a loop with callbacks of its own
    /// it stays (so the loop's shutdown reaches the engine); on a testing loop it is cancelled.
    func start() {
        guard let eventLoop, kind == .unknown, !closing.load(ordering: .relaxed) else { return }
        let now = Int64(clamping: eventLoop.now.uptimeNanoseconds)
        guard let callback = schedule(at: Nanoseconds.adding(now, Self.horizon), on: eventLoop) else { return }
        if callback.handle?.customCallbackID != nil {
            kind = .ownCallbacks
            // Such a loop runs on one thread for its whole life: known from now on, without asking;
            // and its `now` is the system's monotonic clock.
            core.noteLoopThread()
            clock.loopReadsSystemClock()
        } else {
            kind = .scheduledTasks
            cancelPending()
        }
    }

    // MARK: Callbacks (the loop thread)

    /// The queued `execute` ran: a batch, then an arming.
    fileprivate func runDrain() {
        drainPending = false
        guard !closing.load(ordering: .relaxed) else { return }
        core.idleFired()
        prepare()
    }

    /// `callback` came. Once the armed deadline passed it runs the engine's timers; earlier (a
    /// callback left behind by an earlier arming) it is ignored.
    fileprivate func fired(_ callback: WakeCallback) {
        retire(callback)
        guard !closing.load(ordering: .relaxed), let eventLoop else { return }
        let now = Int64(clamping: eventLoop.now.uptimeNanoseconds)
        guard let armed, now >= armed else {
            keepOnePending(now: now, on: eventLoop)
            return
        }
        self.armed = nil
        core.timerFired()
        prepare()
    }

    /// SwiftNIO cancelled `callback`: the loop's last drain (a loop with callbacks of its own), or
    /// a test emptying a testing loop. Never re-armed from here: a new callback would be cancelled
    /// in turn by the same drain.
    fileprivate func cancelled(_ callback: WakeCallback) {
        let ours = callback.cancelledByDriver
        retire(callback)
        guard !ours, !closing.load(ordering: .relaxed) else { return }
        switch kind {
        case .ownCallbacks:
            closing.store(true, ordering: .relaxed)
            cancelPending()
            // Begun and finished here, on the loop thread, outside any batch of the engine.
            LoopShutdown.begin(core)
        case .scheduledTasks, .unknown:
            // Forgotten: the engine's next batch arms again.
            if pending.isEmpty || callback.deadline == armed {
                armed = nil
                core.armedWakeLost()
            }
        }
    }

    // MARK: Helpers

    /// After a batch: the engine arms its wake-up (and publishes what it promised other threads);
    /// on a loop with callbacks of its own, one callback stays pending.
    private func prepare() {
        core.prepareFired()
        if core.timerCount == 0 { timersEmptied() }
        guard kind == .ownCallbacks, !closing.load(ordering: .relaxed), let eventLoop else { return }
        keepOnePending(now: Int64(clamping: eventLoop.now.uptimeNanoseconds), on: eventLoop)
    }

    /// A loop with callbacks of its own tells the engine of its shutdown only through a pending
    /// callback: with none, one at the horizon.
    private func keepOnePending(now: Int64, on eventLoop: any EventLoop) {
        guard kind == .ownCallbacks, pending.isEmpty else { return }
        schedule(at: Nanoseconds.adding(now, Self.horizon), on: eventLoop)
    }

    @discardableResult
    private func schedule(at deadline: Int64, on eventLoop: any EventLoop) -> WakeCallback? {
        let callback = spare.popLast() ?? WakeCallback(link: link)
        callback.deadline = deadline
        callback.cancelledByDriver = false
        let at = NIODeadline.uptimeNanoseconds(UInt64(max(0, deadline)))
        // Pending before SwiftNIO may call it (a testing loop cancels an already closed one at once).
        pending.append(callback)
        do {
            callback.handle = try eventLoop.scheduleCallback(at: at, handler: callback)
            return callback
        } catch {
            // The loop refuses: it is shutting down, and its last drain reaches the engine.
            retire(callback)
            return nil
        }
    }

    /// `callback` is no longer pending: back to the spares.
    private func retire(_ callback: WakeCallback) {
        guard let index = pending.firstIndex(where: { $0 === callback }) else { return }
        pending.remove(at: index)
        callback.handle = nil
        spare.append(callback)
    }

    /// Cancels every pending callback, marked as the driver's own cancellations.
    private func cancelPending() {
        armed = nil
        let cancelling = pending
        for callback in cancelling {
            callback.cancelledByDriver = true
            callback.handle?.cancel()
        }
    }
}

/// The driver as SwiftNIO's closures and callbacks hold it: weakly, through this object (see
/// `EventLoopDriver.link`). Only the driver holds it strongly, so it goes with the driver, and a
/// weak reference to it that loads finds the driver alive.
// `driver` is set once, right after init, before anything else sees the link.
final class DriverLink: @unchecked Sendable {
    unowned(unsafe) var driver: EventLoopDriver!
}

/// The handler of one scheduled callback of a driver, reused for later callbacks once it fired or
/// was cancelled. SwiftNIO holds it while its callback is pending; it holds the driver weakly, so
/// a pending callback never keeps the scheduler alive (no cycle loop → callback → scheduler →
/// loop).
// Every field is the driver's, touched on the loop thread only (SwiftNIO calls a handler there).
final class WakeCallback: NIOScheduledCallbackHandler, @unchecked Sendable {
    private weak var link: DriverLink?
    private var driver: EventLoopDriver? { link?.driver }
    /// The loop's nanoseconds the callback was scheduled for.
    var deadline: Int64 = 0
    /// The handle that cancels it while it is pending.
    var handle: NIOScheduledCallback?
    /// The driver cancelled it (closing, or learning the loop's kind): its cancellation is expected.
    var cancelledByDriver = false

    init(link: DriverLink) {
        self.link = link
    }

    func handleScheduledCallback(eventLoop: some EventLoop) {
        driver?.fired(self)
    }

    func didCancelScheduledCallback(eventLoop: some EventLoop) {
        driver?.cancelled(self)
    }
}
#endif
