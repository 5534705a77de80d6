#if NIO
import LoopScheduling
import Synchronization

/// What one order of `nio-cancel` measured on one system.
@_spi(Workloads)
public typealias EventLoopCancelRun = (
    /// `timers-cancel`'s figures and its check of the cancellations.
    run: TimersCancelRun,
    /// Timers that fired (none may: all are cancelled 30 s before they are due).
    strayFires: Int,
    /// Cancellations SwiftNIO's callback handlers heard (one per timer), nil for other systems.
    cancellationsHeard: Int?
)

/// What one order of `nio-rearm` measured on one system.
@_spi(Workloads)
public typealias EventLoopRearmRun = (
    /// One push-back to now + 30 s.
    nanosecondsPerOperation: Double,
    /// Heap bytes per pending timer as the ring filled.
    bytesPerTimer: Double,
    /// Timers that fired (none may).
    strayFires: Int,
    /// Cancellations SwiftNIO's callback handlers heard (one per operation and one per timer of
    /// the ring at the end), nil for other systems.
    cancellationsHeard: Int?
)

/// What `nio-memory` measured on one system.
@_spi(Workloads)
public typealias EventLoopMemoryRun = (
    /// Heap bytes per pending closure timer; nil without closure timers.
    closureTimer: Double?,
    /// Heap bytes per pending handler timer, one handler shared by all; nil without handler timers.
    handlerTimer: Double?,
    /// Timers that fired (none may).
    strayFires: Int
)

/// The workloads of the SwiftNIO comparison (``EventLoopSystemKind``): each makes a fresh system,
/// runs the workload from a task on the system's thread, and shuts the system down.
@_spi(Workloads)
extension Workloads {
    /// `nio-cancel`, one order: `timers-cancel` (``timersCancel(_:order:harness:)``) on a fresh
    /// system: `order.count` timers 30 s out scheduled, then cancelled in `order`. The harness's
    /// stray fires are counted whether or not it counts them itself.
    public static func eventLoopCancel(
        _ kind: EventLoopSystemKind,
        order: [Int],
        harness: TimerHarness,
        makeLoop: () throws -> LoopScheduler = EventLoopSystemKind.defaultLoop
    ) throws -> EventLoopCancelRun {
        let fired = harness.strayFires ?? Tally()
        return try kind.with(
            makeLoop: makeLoop,
            CancelBody(order: order, harness: harness.countingStrayFires(in: fired))
        )
    }

    /// `nio-rearm`, one order, on a fresh system: `n` pending 30 s timers pushed back to now + 30 s
    /// `operations` times, then disposed: in place (this package's schedulers), or for SwiftNIO a
    /// cancelled callback and a new one. Nil for a system without a re-arm row.
    public static func eventLoopRearm(
        _ kind: EventLoopSystemKind,
        pending n: Int,
        random: Bool,
        operations: Int,
        generator: some RandomNumberGenerator & Sendable,
        makeLoop: () throws -> LoopScheduler = EventLoopSystemKind.defaultLoop
    ) throws -> EventLoopRearmRun? {
        try kind.with(
            makeLoop: makeLoop,
            RearmBody(pending: n, random: random, operations: operations, generator: generator)
        )
    }

    /// `nio-fire` on a fresh system: the burst of `timers-fire` (ns per schedule, no timer early),
    /// then each burst of `lateness` in turn (each timer's lateness, checked to fire once and
    /// never early).
    public static func eventLoopFire(
        _ kind: EventLoopSystemKind,
        fire: TimerBurst,
        lateness: [TimerBurst],
        makeLoop: () throws -> LoopScheduler = EventLoopSystemKind.defaultLoop
    ) throws -> (fire: TimersFireRun, lateness: [LatenessRun]) {
        try kind.with(makeLoop: makeLoop, FireBody(fire: fire, lateness: lateness))
    }

    /// `nio-memory`: heap bytes per pending timer with `n` pending an hour out, as `pending-memory`
    /// measures them but scheduled and cancelled on the system's thread, each figure on a fresh
    /// system (a store grown by one pass and kept would hide the next pass's growth): closure
    /// timers, then handler timers sharing one handler (the scheduler's own bytes).
    public static func eventLoopMemory(
        _ kind: EventLoopSystemKind,
        _ n: Int,
        harness: TimerHarness,
        makeLoop: () throws -> LoopScheduler = EventLoopSystemKind.defaultLoop
    ) throws -> EventLoopMemoryRun {
        let fired = harness.strayFires ?? Tally()
        let counting = harness.countingStrayFires(in: fired)
        let closure =
            kind.hasClosureTimers
            ? try kind.with(makeLoop: makeLoop, MemoryBody(n: n, handlers: false, harness: counting)) : nil
        let handler =
            kind.hasHandlerTimers
            ? try kind.with(makeLoop: makeLoop, MemoryBody(n: n, handlers: true, harness: counting)) : nil
        return (closure, handler, fired.count)
    }
}

private struct CancelBody: ComparedSystemBody {
    let order: [Int]
    let harness: TimerHarness

    func run<System: ComparedSystem>(_ system: System) -> EventLoopCancelRun {
        let run = Workloads.timersCancel(system, order: order, harness: harness, settle: system.settle)
        system.roundTrip()
        return (run, harness.strayFires?.count ?? 0, system.cancellationsHeard)
    }
}

private struct RearmBody<Generator: RandomNumberGenerator & Sendable>: ComparedSystemBody {
    let pending: Int
    let random: Bool
    let operations: Int
    let generator: Generator

    func run<System: ComparedSystem>(_ system: System) -> EventLoopRearmRun? {
        Measure.trimHeap()
        system.roundTrip()
        let fired = Tally()
        let result = Mutex<RearmFigures?>(nil)
        let pass = RearmPass(pending: pending, random: random, operations: operations, strayFires: fired)
        system.onScheduler { [generator] in
            var generator = generator
            let run = system.rearmPass(pass, generator: &generator)
            result.withLock { $0 = run }
        }
        system.roundTrip()
        guard let run = result.withLock({ $0 }) else { return nil }
        return (run.nanosecondsPerOperation, run.bytesPerTimer, fired.count, system.cancellationsHeard)
    }
}

private struct FireBody: ComparedSystemBody {
    let fire: TimerBurst
    let lateness: [TimerBurst]

    func run<System: ComparedSystem>(
        _ system: System
    ) throws(WorkloadTimeout) -> (
        fire: TimersFireRun, lateness: [LatenessRun]
    ) {
        let fired = try fire.fire(on: system)
        var runs: [LatenessRun] = []
        for burst in lateness { runs.append(try burst.lateness(on: system)) }
        return (fired, runs)
    }
}

private struct MemoryBody: ComparedSystemBody {
    let n: Int
    /// Handler timers sharing one handler; otherwise closure timers.
    let handlers: Bool
    let harness: TimerHarness

    /// The figure from a task on the system's thread, where the timers are scheduled and
    /// cancelled: nothing is queued for the loop, so the readings need no round trip.
    func run<System: ComparedSystem>(_ system: System) -> Double {
        let result = Mutex<Double>(0)
        system.onScheduler { [n, handlers, harness] in
            let shared = CountingHandler(tally: harness.strayFires ?? Tally())
            let bytes =
                handlers
                ? Workloads.bytesPerPending(
                    n,
                    harness: harness,
                    roundTrip: {},
                    arm: { system.handlerTimer(afterNanoseconds: 3_600_000_000_000, handler: shared) },
                    cancel: { if let timer = $0 { system.cancel(timer) } }
                )
                : Workloads.bytesPerPending(
                    n,
                    harness: harness,
                    roundTrip: {},
                    arm: { harness.neverFiring(system, afterNanoseconds: 3_600_000_000_000) },
                    cancel: system.cancel
                )
            result.withLock { $0 = bytes }
        }
        system.roundTrip()
        return result.withLock { $0 }
    }
}
#endif
