#if NIO
import LoopScheduling
import NIOCore
import Scheduling

/// The systems of the side-by-side comparison on one SwiftNIO event loop thread (issue 38, item
/// 4): this package's `EventLoopScheduler` and SwiftNIO's two timer APIs, each on a fresh NIOPosix
/// loop of its own thread, and a `LoopScheduler` on its own loop for reference. Every timer
/// operation of a run is made on the system's thread, from a task it runs (SwiftNIO's `execute`
/// on the event loops).
@_spi(Workloads)
public enum EventLoopSystemKind: String, CaseIterable, Sendable, Codable {
    /// ``EventLoopSchedulerSystem``: `eventLoop.scheduler`, driven from the loop's own tasks.
    case eventLoopScheduler = "EventLoopScheduler"
    /// ``NIOTaskSystem``: `scheduleTask(in:)` and `Scheduled.cancel()`.
    case nioScheduleTask = "NIO scheduleTask"
    /// ``NIOCallbackSystem``: `scheduleCallback(in:handler:)` with a handler object per timer.
    case nioScheduleCallback = "NIO scheduleCallback"
    /// ``SchedulerSystem`` on a `LoopScheduler` (its own libuv loop and thread).
    case loopScheduler = "LoopScheduler"

    /// SwiftNIO's cancel searches the loop's heap of scheduled tasks linearly.
    public var cancelIsLinear: Bool { self == .nioScheduleTask || self == .nioScheduleCallback }

    /// The most timers a linear cancel runs in random order: a million take hours.
    public static let linearRandomLimit = 100_000

    /// Whether the system runs a random-order row with `pending` timers.
    public func runsRandomOrder(pending n: Int) -> Bool {
        !cancelIsLinear || n <= Self.linearRandomLimit
    }

    /// Whether the system pushes a timer back: in place (`RearmableTimer.rearm(after:)`), or for
    /// SwiftNIO a cancelled callback and a new one. `scheduleTask` has no row of its own.
    public var rearms: Bool { self != .nioScheduleTask }

    /// Push-backs of one re-arm pass: a million, or for a linear cancel in random order 100k
    /// (each searches the heap).
    public func rearmOperations(random: Bool) -> Int {
        random && cancelIsLinear ? 100_000 : Workloads.churnOperations
    }

    /// Whether the system has closure timers (all but SwiftNIO's callbacks).
    public var hasClosureTimers: Bool { self != .nioScheduleCallback }

    /// Whether the system has handler timers, an object called when the timer comes (all but
    /// `scheduleTask`).
    public var hasHandlerTimers: Bool { self != .nioScheduleTask }

    /// A `LoopScheduler` as applications make one (the platform's preferred timer driver).
    public static func defaultLoop() throws -> LoopScheduler {
        try LoopScheduler(name: "bench-loop")
    }

    /// Makes the system, gives it to `body`, and shuts it down. `makeLoop` makes the
    /// `LoopScheduler` of ``loopScheduler``.
    func with<Body: ComparedSystemBody>(makeLoop: () throws -> LoopScheduler, _ body: Body) throws -> Body.Result {
        switch self {
        case .eventLoopScheduler: try Self.run(EventLoopSchedulerSystem(), body)
        case .nioScheduleTask: try Self.run(NIOTaskSystem(), body)
        case .nioScheduleCallback: try Self.run(NIOCallbackSystem(), body)
        case .loopScheduler: try Self.run(SchedulerSystem(loop: try makeLoop()), body)
        }
    }

    private static func run<System: ComparedSystem, Body: ComparedSystemBody>(
        _ system: System,
        _ body: Body
    ) throws -> Body.Result {
        defer { system.shutdown() }
        return try body.run(system)
    }
}

/// One pass of the pushed-back timeout: `pending` timers 30 s out, then `operations` pushes
/// back to now + 30 s (the oldest first, or with `random` a random one), then all cancelled.
/// `strayFires` counts a timer that fired.
struct RearmPass {
    let pending: Int
    let random: Bool
    let operations: Int
    let strayFires: Tally
}

/// ns per push-back, heap bytes per pending timer.
typealias RearmFigures = (nanosecondsPerOperation: Double, bytesPerTimer: Double)

/// A workload of the comparison, run on each system with that system's concrete type (the
/// workloads are specialised for it, as code written against it would be).
protocol ComparedSystemBody {
    associatedtype Result
    func run<System: ComparedSystem>(_ system: System) throws -> Result
}

/// What the comparison asks of a system beyond the workloads' common operations.
protocol ComparedSystem: WorkloadSystem {
    /// The pushed-back timeout, one pass on the system's thread (see ``RearmPass``), the random
    /// picks drawn from `generator`; nil for a system without a row.
    func rearmPass<Generator: RandomNumberGenerator>(_ pass: RearmPass, generator: inout Generator) -> RearmFigures?

    /// A timer that calls `handler` (shared by many timers) `delay` from now; nil without handler
    /// timers.
    func handlerTimer(afterNanoseconds delay: Int64, handler: CountingHandler) -> TimerHandle?

    /// Cancellations the system's handlers heard; nil when it does not tell.
    var cancellationsHeard: Int? { get }

    /// Waits before a reading of the heap: a round trip, and a loop's next iteration.
    func settle()
}

extension ComparedSystem {
    var cancellationsHeard: Int? { nil }

    /// A round trip: SwiftNIO's loops and `EventLoopScheduler` give memory back as timers go (no
    /// hook when the loop goes quiet).
    func settle() { roundTrip() }
}

/// This package's schedulers: re-armed in place (`RearmableTimer`), handler timers of
/// `DateScheduler`, both through the protocol as the workloads' `rearm` always measured them.
protocol ComparedDateScheduler: ComparedSystem where TimerHandle == any Disposable {
    var dateScheduler: any DateScheduler { get }
}

extension ComparedDateScheduler {
    func rearmPass<Generator: RandomNumberGenerator>(_ pass: RearmPass, generator: inout Generator) -> RearmFigures? {
        let scheduler = dateScheduler
        let strayFires = pass.strayFires
        let run = Workloads.rearm(
            pending: pass.pending,
            random: pass.random,
            generator: &generator,
            operations: pass.operations
        ) { scheduler.scheduleRearmable(after: .seconds(30)) { strayFires.add() } }
        return (run.nanosecondsPerOperation, run.bytesPerTimer)
    }

    func handlerTimer(afterNanoseconds delay: Int64, handler: CountingHandler) -> (any Disposable)? {
        dateScheduler.schedule(.after(.nanoseconds(delay)), leeway: .zero, handler: handler)
    }
}

extension EventLoopSchedulerSystem: ComparedDateScheduler {
    var dateScheduler: any DateScheduler { scheduler }
}

extension SchedulerSystem: ComparedDateScheduler {
    var dateScheduler: any DateScheduler { scheduler }
}

extension NIOTaskSystem: ComparedSystem {
    /// No row: SwiftNIO's re-arm is a cancelled callback and a new one (``NIOCallbackSystem``).
    func rearmPass<Generator: RandomNumberGenerator>(_ pass: RearmPass, generator: inout Generator) -> RearmFigures? {
        nil
    }

    /// None: `scheduleTask` takes a closure.
    func handlerTimer(afterNanoseconds delay: Int64, handler: CountingHandler) -> TimerHandle? { nil }
}

extension NIOCallbackSystem: ComparedSystem {
    /// SwiftNIO has no re-arm: the callback is cancelled and a new one scheduled at now + 30 s
    /// (a handler object each), in the ring of SchedulingWorkloads' `churn`.
    func rearmPass<Generator: RandomNumberGenerator>(_ pass: RearmPass, generator: inout Generator) -> RearmFigures? {
        let strayFires = pass.strayFires
        let run = Workloads.churn(
            pending: pass.pending,
            random: pass.random,
            generator: &generator,
            operations: pass.operations,
            arm: { schedule(afterNanoseconds: 30_000_000_000) { strayFires.add() } },
            cancel: { cancel($0) }
        )
        return (run.nanosecondsPerOperation, run.bytesPerTimer)
    }

    func handlerTimer(afterNanoseconds delay: Int64, handler: CountingHandler) -> TimerHandle? {
        .callback(scheduleCallback(afterNanoseconds: delay, handler: handler))
    }

    var cancellationsHeard: Int? { cancellations.count }
}

/// The shared handler of the handler-timer rows is a scheduled callback's handler too.
extension CountingHandler: NIOScheduledCallbackHandler {
    func handleScheduledCallback(eventLoop: some EventLoop) {
        tally.add()
    }
}
#endif
