#if CommandLineTool
import Dispatch
import Foundation
import LoopScheduling
import Scheduling

/// The schedulers a cross-check compares.
enum CheckedScheduler: String, CaseIterable {
    case loop = "LoopScheduler"
    case queue = "QueueScheduler"
    case test = "TestScheduler"

    var isSerial: Bool { true }
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
    /// Per op: when `dispose()` returned, for disposed ops.
    var disposedAt: [Int: Int64] = [:]
    /// Ops whose `dispose()` from another thread found the action still waiting: it must never
    /// run. (When it found it already claimed, the action legitimately runs, and a timestamp taken
    /// inside it may still come after `dispose()` returned, if the thread was preempted between
    /// the claim and the action's first instruction: that is no violation, so it is not recorded.)
    var wonDisposal: Set<Int> = []
    /// Per op: the deadline the driver asked for (monotonic lower bound), for one-shot timers.
    var dueAtLeast: [Int: Int64] = [:]
    /// Per op: the wall-clock date asked for, in nanoseconds of the scheduler's wall clock.
    var wallDue: [Int: Int64] = [:]
    var timedOut = false
}

/// Runs scripts on one kind of scheduler and records a trace.
struct ScriptRunner {
    let kind: CheckedScheduler

    func run(_ script: Script) throws -> Trace {
        switch kind {
        case .loop:
            let loop = try LoopScheduler(name: "crosscheck")
            defer { loop.syncShutdown() }
            return drive(
                script,
                on: loop,
                clock: Nanoseconds.monotonicNow,
                wall: Nanoseconds.wallNow,
                advance: { _ in }
            )
        case .queue:
            let queue = QueueScheduler(name: "crosscheck")
            return drive(
                script,
                on: queue,
                clock: Nanoseconds.monotonicNow,
                wall: Nanoseconds.wallNow,
                advance: { _ in }
            )
        case .test:
            let test = TestScheduler(now: Date())
            let clock: @Sendable () -> Int64 = { test.virtualNanoseconds }
            return drive(script, on: test, clock: clock, wall: clock) { horizon in
                test.advance(by: .microseconds(horizon + 1_000))
            }
        }
    }

    private func drive(
        _ script: Script,
        on scheduler: any DateScheduler,
        clock: @escaping @Sendable () -> Int64,
        wall: @escaping @Sendable () -> Int64,
        advance: (Int) -> Void
    ) -> Trace {
        let trace = LockedValue(Trace())
        let otherThreads = DispatchGroup()
        let virtual = scheduler is TestScheduler
        @Sendable func record(_ op: Int, child: Int = 0, inTask: Bool = false, _ body: () -> Void = {}) {
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
        func called(_ op: Int) {
            let now = (clock(), wall())
            trace.withLock { $0.called[op] = now }
        }
        // Tasks run on the global pool, except on the test scheduler: there they prefer it, so its
        // virtual time drives them (rule 12).
        let taskExecutor = scheduler as? TestScheduler
        for (id, op) in script.ops.enumerated() {
            called(id)
            /// A task that sleeps `delay` µs on the scheduler and records a run if the sleep returned.
            @discardableResult
            func sleepTask(_ delay: Int) -> Task<Void, Never> {
                Task(executorPreference: taskExecutor) {
                    let due = clock() + Int64(delay) * 1_000
                    trace.withLock { $0.dueAtLeast[id] = due }
                    do {
                        try await scheduler.sleep(for: .microseconds(delay))
                        record(id, inTask: true)
                    } catch {}
                }
            }
            switch op {
            case .task:
                scheduler.schedule { record(id) }
            case .timer(let delay):
                trace.withLock { $0.dueAtLeast[id] = clock() + Int64(delay) * 1_000 }
                scheduler.schedule(after: .microseconds(delay)) { record(id) }
            case .wallTimer(let offset):
                let date = scheduler.now.addingTimeInterval(Double(offset) / 1e6)
                let due = Nanoseconds.sinceEpoch(date)
                trace.withLock { $0.wallDue[id] = due }
                scheduler.schedule(at: date) { record(id) }
            case .periodic(let interval, let ticks, let stall):
                trace.withLock { $0.dueAtLeast[id] = clock() + Int64(interval) * 1_000 }
                let slot = LockedValue<(any Disposable)?>(nil)
                let count = LockedValue(0)
                let disposable = scheduler.schedule(
                    after: .microseconds(interval),
                    repeatingEvery: .microseconds(interval)
                ) {
                    record(id) {
                        let tick = count.withLock { value -> Int in
                            value += 1
                            return value
                        }
                        if tick == 1 && stall > 0 {
                            let until = Nanoseconds.monotonicNow() + Int64(stall * interval) * 1_000
                            while Nanoseconds.monotonicNow() < until {}
                        }
                        if tick == ticks { slot.withLock { $0 }?.dispose() }
                    }
                }
                slot.withLock { $0 = disposable }
            case .timerDisposedAtOnce(let delay):
                let disposable = scheduler.schedule(after: .microseconds(delay)) { record(id) }
                disposable.dispose()
                let now = clock()
                trace.withLock { $0.disposedAt[id] = now }
            case .timerDisposedByOtherThread(let delay, let after):
                trace.withLock { $0.dueAtLeast[id] = clock() + Int64(delay) * 1_000 }
                let disposable = scheduler.schedule(after: .microseconds(delay)) { record(id) }
                otherThreads.enter()
                DispatchQueue.global().asyncAfter(deadline: .now() + .microseconds(virtual ? 0 : after)) {
                    let won: Bool
                    if let reporting = disposable as? any DisposeOutcomeReporting {
                        won = reporting.disposeReportingPending()
                    } else {
                        disposable.dispose()
                        won = false
                    }
                    trace.withLock { if won { $0.wonDisposal.insert(id) } }
                    otherThreads.leave()
                }
                if virtual { otherThreads.wait() }
            case .nested(let children):
                scheduler.schedule {
                    record(id) {
                        for child in 1...children { scheduler.schedule { record(id, child: child) } }
                    }
                }
            case .recursive(let runs):
                let count = LockedValue(0)
                scheduler.scheduleRecursive { reschedule in
                    record(id)
                    let run = count.withLock { value -> Int in
                        value += 1
                        return value
                    }
                    if run < runs { reschedule() }
                }
            case .actorCalls(let calls):
                let pinned = PinnedActor(scheduler: scheduler)
                // Odd counts call from a task that prefers the scheduler (a hop through its queue
                // each way, on its thread), even ones from the global pool (a thread hand-off).
                let preference: (any TaskExecutor)? = calls % 2 == 1 ? scheduler as? any TaskExecutor : taskExecutor
                Task(executorPreference: preference) {
                    for _ in 0..<calls { await pinned.call { record(id) } }
                }
            case .sleep(let delay):
                // Never cancelled: a throw is a lost run, which the outcome check reports.
                sleepTask(delay)
            case .sleepCancelledByOtherThread(let delay, let after):
                // Cancelled: the sleep throws, as it must, and nothing runs.
                let sleeper = sleepTask(delay)
                if virtual {
                    // At virtual time `after`, from the advancing thread: the sleep may be pending
                    // then, which a cancel before the first advance would never exercise.
                    scheduler.schedule(after: .microseconds(after)) { sleeper.cancel() }
                } else {
                    otherThreads.enter()
                    DispatchQueue.global().asyncAfter(deadline: .now() + .microseconds(after)) {
                        sleeper.cancel()
                        otherThreads.leave()
                    }
                }
            }
        }
        let horizon = script.horizonMicros
        advance(horizon)
        // Wait until every op with a fixed outcome is done, then a little past the horizon for
        // anything that must not happen (a disposed timer firing late).
        let expected = script.ops.reduce(0) { $0 + ($1.expectedRuns ?? 0) }
        let deadline = DispatchTime.now() + .seconds(30)
        let bell = DispatchSemaphore(value: 0)
        while trace.withLock({ $0.runs.filter { script.ops[$0.op].expectedRuns != nil }.count }) < expected {
            if DispatchTime.now() > deadline {
                trace.withLock { $0.timedOut = true }
                break
            }
            if virtual { advance(1_000) } else { _ = bell.wait(timeout: .now() + .milliseconds(2)) }
        }
        otherThreads.wait()
        if virtual { advance(horizon + 50_000) } else { _ = bell.wait(timeout: .now() + .milliseconds(30)) }
        return trace.withLock { $0 }
    }
}

/// An actor pinned to the scheduler under check, for ``Op/actorCalls(calls:)``.
private actor PinnedActor {
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
#endif
