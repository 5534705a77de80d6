#if CommandLineTool
import Dispatch
import Foundation
import LoopScheduling
import Scheduling
@_spi(Workloads) import SchedulingWorkloads

/// The schedulers a cross-check compares.
enum CheckedScheduler: String, CaseIterable {
    case loop = "LoopScheduler"
    case queue = "QueueScheduler"
    case concurrentQueue = "ConcurrentQueueScheduler"
    case test = "TestScheduler"
    #if NIO
    /// `EventLoopScheduler` on a SwiftNIO event loop (NIOPosix), trait NIO.
    case eventLoop = "EventLoopScheduler"
    #endif

    /// Runs one action at a time (rule 3). A concurrent scheduler runs only a script's timer ops
    /// (``Op/isTimerOp``), and the rules that need seriality skip it.
    var isSerial: Bool { self != .concurrentQueue }

    /// On virtual time: pauses advance it, and nothing is ever late.
    var isVirtual: Bool { self == .test }

    /// How late, in nanoseconds, an action may start past its deadline plus the leeway it is
    /// allowed: on real time, generous for a loaded 2-core machine running four schedulers at once
    /// (a second: with a busy loop on each core beside the cross-check and another process's
    /// timers, one script saw its timers up to 360 ms late on all three real-time schedulers at
    /// once; a timer whose wake-up is lost is late by its far neighbour's hour, or forever); on
    /// virtual time, nothing.
    var lateness: Int64 { isVirtual ? 0 : 1_000_000_000 }

    /// Whether this scheduler runs `op`.
    func runs(_ op: Op) -> Bool { isSerial || op.isTimerOp }
}

/// What happened while a script ran on one scheduler.
struct Trace: Sendable {
    /// One start of an action: which op, which run of it, when it started and ended (scheduler's
    /// clock), and whether the scheduler was current.
    struct Run: Sendable {
        // Which run: the op, the child, and how it ran.
        var op: Int
        /// For nested children: which child.
        var child: Int
        /// Recorded in a task after an async wait, not as one of the scheduler's actions: rules 2
        /// and 3 (current scheduler, serial) do not apply to it.
        var inTask = false
        // What the run saw.
        var start: Int64
        var end: Int64
        var wallStart: Int64
        var wasCurrent: Bool
    }

    var runs: [Run] = []
    /// Per op: the clock just before `schedule` was called, and the wall clock then.
    var called: [Int: (monotonic: Int64, wall: Int64)] = [:]
    /// Per op: the clocks just after `schedule` returned. The scheduler read its clock in
    /// between: a deadline is due no later than this plus the delay (the driver thread may be
    /// preempted in between on a loaded machine, which must not count as lateness).
    var returned: [Int: (monotonic: Int64, wall: Int64)] = [:]
    /// Per op: when `dispose()` returned, for disposed ops.
    var disposedAt: [Int: Int64] = [:]
    /// Ops whose `dispose()` from another thread found the action still waiting: it must never
    /// run. (When it found it already claimed, the action legitimately runs, and a timestamp taken
    /// inside it may still come after `dispose()` returned, if the thread was preempted between
    /// the claim and the action's first instruction: that is no violation, so it is not recorded.)
    var wonDisposal: Set<Int> = []
    /// Per far op that never ran (a far one-shot timer, a periodic timer with a far first tick):
    /// whether disposing it at the end of the script found it still pending (rule 9: huge values
    /// saturate and stay pending until disposed).
    var pendingAtEnd: [Int: Bool] = [:]
    /// Per op: the deadline the driver asked for (monotonic lower bound), for timers.
    var dueAtLeast: [Int: Int64] = [:]
    /// Per op: the wall-clock date asked for, in nanoseconds of the scheduler's wall clock.
    var wallDue: [Int: Int64] = [:]
    /// How long the driver waited for the runs the contract fixes, when they did not all come.
    var timedOut: Duration?
}

/// Runs scripts on one kind of scheduler and records a trace.
struct ScriptRunner {
    let kind: CheckedScheduler

    /// How long past the script's horizon the driver waits for the runs the contract fixes: well
    /// past ``CheckedScheduler/lateness``, so a loaded machine never reaches it, and short, so a
    /// lost timer costs a script seconds, not half a minute.
    static let patience: Duration = .seconds(3)

    func run(_ script: Script) throws -> Trace {
        switch kind {
        case .loop:
            let loop = try LoopScheduler(name: "crosscheck")
            defer { loop.syncShutdown() }
            return realTime(script, on: loop)
        case .queue:
            return realTime(script, on: QueueScheduler(name: "crosscheck"))
        case .concurrentQueue:
            return realTime(script, on: ConcurrentQueueScheduler(name: "crosscheck"))
        #if NIO
        case .eventLoop:
            let loop = NIOLoopThread()
            defer { loop.shutdown() }
            return realTime(script, on: loop.scheduler)
        #endif
        case .test:
            let test = TestScheduler(now: Date())
            let clock: @Sendable () -> Int64 = { test.virtualNanoseconds }
            let driver = ScriptDriver(kind: kind, scheduler: test, clock: clock, wall: clock)
            return driver.drive(script) { test.advance(by: $0) }
        }
    }

    private func realTime(_ script: Script, on scheduler: any DateScheduler) -> Trace {
        let driver = ScriptDriver(
            kind: kind,
            scheduler: scheduler,
            clock: Nanoseconds.monotonicNow,
            wall: Nanoseconds.wallNow
        )
        return driver.drive(script) { pause in
            guard pause > .zero else { return }
            Thread.sleep(forTimeInterval: Double(pause.nanoseconds) / 1e9)
        }
    }
}

/// Records the runs of one script on one scheduler: shared by the driver and the actions.
struct Recorder: Sendable {
    let trace = LockedValue(Trace())
    let scheduler: any DateScheduler
    let clock: @Sendable () -> Int64
    let wall: @Sendable () -> Int64

    /// Records one run of op `op` around `body`.
    func record(_ op: Int, child: Int = 0, inTask: Bool = false, _ body: () -> Void = {}) {
        let start = clock()
        let wallStart = wall()
        let current = Schedulers.current === scheduler
        body()
        let end = clock()
        trace.withLock {
            $0.runs.append(
                .init(
                    op: op,
                    child: child,
                    inTask: inTask,
                    start: start,
                    end: end,
                    wallStart: wallStart,
                    wasCurrent: current
                )
            )
        }
    }

    /// Records that op `op` asked for a deadline `delay` from now (negative: now), saturating.
    func due(_ op: Int, after delay: Duration) {
        let due = Nanoseconds.adding(clock(), Nanoseconds.delay(delay))
        trace.withLock { $0.dueAtLeast[op] = due }
    }
}

/// A one-shot timer handler that records a run (`schedule(after:leeway:handler:)`).
struct RecordingHandler: SchedulerTimerHandler {
    let fired: @Sendable () -> Void

    func timerFired() { fired() }
}

/// An actor pinned to the scheduler under check, for ``Op/actorCalls(calls:)``.
actor PinnedActor {
    /// Held so the executor outlives the actor, as Swift requires.
    let scheduler: any DateScheduler
    let executor: UnownedSerialExecutor

    init(scheduler: any DateScheduler) {
        self.scheduler = scheduler
        executor = (scheduler as! any SerialExecutor).asUnownedSerialExecutor()
    }

    nonisolated var unownedExecutor: UnownedSerialExecutor { executor }

    func call(_ body: @Sendable () -> Void) {
        body()
    }
}

extension Duration {
    /// For Dispatch's deadlines (saturating).
    var dispatchInterval: DispatchTimeInterval { .nanoseconds(Int(max(0, nanoseconds))) }
}
#endif
