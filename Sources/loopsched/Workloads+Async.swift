#if CommandLineTool
import LoopScheduling
import Scheduling
@_spi(Workloads) import SchedulingWorkloads

/// The Swift-concurrency workloads of Docs/Design.md §8: what an actor, a sleep and a timeout cost
/// on each scheduler, next to what Swift offers without one. Each compares its own set of systems,
/// so they are reported per system rather than as a Loop/Queue ratio. The workloads themselves are
/// in SchedulingWorkloads, shared with `Benchmarks/`.
enum AsyncWorkload: String, CaseIterable, Codable {
    case actorHop = "actor-hop"
    case sleepCancel = "sleep-cancel"
    case timeout
    case taskSleep = "task-sleep"
    case taskSleepCancel = "task-sleep-cancel"
    case yield
    case spawn

    /// The size at which the figures are quoted (Docs/Design.md §8, issue 8): `--full`.
    var fullSize: Int {
        switch self {
        case .actorHop, .timeout, .yield: 1_000_000
        case .sleepCancel, .taskSleepCancel: 100_000
        case .taskSleep: 20_000
        case .spawn: 200_000
        }
    }

    /// The size of the default run, which must stay within a few minutes on 2 cores: a call that
    /// hands the thread over each way costs ~15 µs there, so 1M of them would take minutes alone.
    /// The figures are per call and do not depend on the count beyond noise.
    var defaultSize: Int {
        switch self {
        case .actorHop, .timeout, .spawn: 200_000
        case .sleepCancel, .taskSleepCancel: 100_000
        case .taskSleep: 2_000
        case .yield: 1_000_000
        }
    }

    var summary: String {
        switch self {
        case .actorHop:
            "n awaited calls to an actor pinned to the scheduler, from a pool task and from a task "
                + "preferring that scheduler (baseline: a default actor)"
        case .sleepCancel: "n tasks sleep 30 s on the scheduler, all cancelled once all sleep"
        case .timeout: "n sequential withTimeout(30 s) { quick } calls (baseline: a task group racing Task.sleep)"
        case .taskSleep:
            "n sequential 1 ms sleeps in one task: on the loop, a plain Task.sleep (the loop's timer with the "
                + "trait ExperimentalExecutors, Dispatch's without) and loop.sleep; on the default executor, Task.sleep"
        case .taskSleepCancel: "n tasks sleep 30 s as task-sleep's do, all cancelled once all sleep"
        case .yield: "n sequential Task.yield() in one task, on the loop and on the default executor"
        case .spawn:
            "n empty child tasks of one task, in discarding task groups of \(Workloads.spawnBatch) awaited in turn, "
                + "on the loop and on the default executor"
        }
    }

    var systems: [AsyncSystem] {
        switch self {
        case .actorHop: [.loop, .queue, .defaultActor]
        case .sleepCancel: [.loop, .queue, .taskSleep, .continuousClock]
        case .timeout: [.loop, .loopCaller, .queue, .taskGroupRace]
        case .taskSleep, .taskSleepCancel: [.loopTask, .loopTaskLoopSleep, .defaultExecutor]
        case .yield, .spawn: [.loopTask, .defaultExecutor]
        }
    }

    /// The report's columns, in order.
    var metrics: [String] {
        switch self {
        case .actorHop: ["pool ns/call", "pool cpu ns/call", "own ns/call", "own cpu ns/call"]
        case .sleepCancel: ["ns/pair", "cpu ns/pair", "held MB after", "loop iter/1k"]
        case .timeout: ["ns/call", "cpu ns/call", "held MB after", "loop iter/1k"]
        case .taskSleep: ["p50 µs", "p99 µs", "cpu µs/sleep", "early", "loop timers fired"]
        case .taskSleepCancel: ["ns/pair", "cpu ns/pair", "held B/sleep", "loop iter/1k"]
        case .yield: ["ns/yield", "cpu ns/yield"]
        case .spawn: ["ns/task", "cpu ns/task"]
        }
    }

    /// How many operations `system` runs when `n` were asked for. The task-group race keeps every
    /// cancelled `Task.sleep` queued until its 30 s deadline; capped, it fits in memory and in the
    /// 30 s before the first of them fire.
    func size(on system: AsyncSystem, requested n: Int) -> Int {
        system == .taskGroupRace ? min(n, Self.raceCap) : n
    }

    static let raceCap = 200_000

    /// Whether a run on `system` leaves work queued in the process: a cancelled `Task.sleep` stays in
    /// the global executor until its deadline, 30 s later. Such runs go last, so that the burst of
    /// expiries lands after the other measurements rather than inside one. In a task on a loop a
    /// cancelled `Task.sleep` stays too: in Dispatch without the trait ExperimentalExecutors, and
    /// with it as the loop's timer, handed to Dispatch with its deadline when the loop shuts down.
    func leavesSleepsQueued(on system: AsyncSystem) -> Bool {
        switch system {
        case .taskSleep, .continuousClock, .taskGroupRace: true
        case .loopTask, .defaultExecutor: self == .taskSleepCancel
        case .loop, .loopCaller, .queue, .defaultActor, .loopTaskLoopSleep: false
        }
    }

    func run(on system: AsyncSystem, size n: Int, driver: TimerDriverKind) throws -> Sample {
        switch self {
        case .actorHop: try Self.actorHop(on: system, n, driver: driver)
        case .sleepCancel, .taskSleepCancel, .timeout: try runTimedOperations(on: system, n, driver: driver)
        case .taskSleep, .yield, .spawn: try runInOneTask(on: system, n, driver: driver)
        }
    }

    /// A fresh LoopScheduler for one run.
    static func makeLoop(_ driver: TimerDriverKind) throws -> LoopScheduler {
        try LoopScheduler(name: "bench-async", clock: SystemClock(), driver: driver)
    }

    /// A fresh QueueScheduler for one run, at the priority the timer workloads use.
    static func makeQueue() -> QueueScheduler {
        QueueScheduler(name: "loopsched-async", priority: .high)
    }
}

/// What an async workload runs on.
enum AsyncSystem: String, CaseIterable, Codable {
    case loop
    /// The LoopScheduler with the caller itself on the loop (a task preferring it), where
    /// scheduling and disposing the timer need no cross-thread submission.
    case loopCaller
    case queue
    case defaultActor
    case taskSleep
    case continuousClock
    case taskGroupRace
    /// A task preferring a LoopScheduler (`Task(executorPreference: loop)`); its sleeps are plain
    /// `Task.sleep`s, served by the loop with the trait ExperimentalExecutors and by Dispatch without.
    case loopTask
    /// The same task sleeping with the loop's own `sleep(for:)` (module Scheduling).
    case loopTaskLoopSleep
    /// A detached task on Swift's default executor; its sleeps are `Task.sleep`s.
    case defaultExecutor

    var displayName: String {
        switch self {
        case .loop: "LoopScheduler"
        case .loopCaller: "LoopScheduler, caller on it"
        case .queue: "QueueScheduler"
        case .defaultActor: "default actor"
        case .taskSleep: "Task.sleep"
        case .continuousClock: "ContinuousClock.sleep"
        case .taskGroupRace: "task-group race"
        case .loopTask: "task on loop"
        case .loopTaskLoopSleep: "task on loop, loop.sleep"
        case .defaultExecutor: "task on default executor"
        }
    }

    /// Runs `body` with this system's scheduler, made for the run (a loop with `driver`) and shut
    /// down after it.
    func withScheduler<Result>(driver: TimerDriverKind, _ body: (AsyncRunScheduler) throws -> Result) throws -> Result {
        switch self {
        case .loop, .loopCaller, .loopTask, .loopTaskLoopSleep:
            let loop = try AsyncWorkload.makeLoop(driver)
            defer { loop.syncShutdown() }
            return try body(
                AsyncRunScheduler(
                    scheduler: loop,
                    loop: loop,
                    settle: { AsyncBridge.roundTripAndIteration(loop) },
                    iterations: { loop.statistics.loopIterations }
                )
            )
        case .queue:
            let queue = AsyncWorkload.makeQueue()
            return try body(
                AsyncRunScheduler(
                    scheduler: queue,
                    loop: nil,
                    settle: { AsyncBridge.roundTrip(queue) },
                    iterations: nil
                )
            )
        case .defaultActor, .taskSleep, .continuousClock, .taskGroupRace, .defaultExecutor:
            return try body(AsyncRunScheduler(scheduler: nil, loop: nil, settle: {}, iterations: nil))
        }
    }
}

/// What `sleep-cancel` and `timeout` use of their system for one run.
struct AsyncRunScheduler {
    /// The scheduler that sleeps or arms the timeout; nil for Swift's own baselines.
    let scheduler: (any DateScheduler)?
    /// The loop, when the scheduler is one: the executor a caller "on it" prefers.
    let loop: LoopScheduler?
    /// Waits until the scheduler is done with the run's work (for a loop, until the iteration
    /// after it, where a quiet loop gives memory back).
    let settle: () -> Void
    /// The loop's iteration count, for how often the run woke it.
    let iterations: (() -> Int)?
}
#endif
