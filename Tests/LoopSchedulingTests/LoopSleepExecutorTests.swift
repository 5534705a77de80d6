#if compiler(>=6.3) && ExperimentalExecutors && os(Linux)
@_spi(ExperimentalScheduling) import _Concurrency
import Foundation
import LoopSchedulingTestSupport
import Scheduling
import Synchronization
import Testing

@testable import LoopEngine
@_spi(ExperimentalScheduling) @testable import LoopScheduling

/// An actor pinned to a loop whose method sleeps with a plain `Task.sleep`.
private actor Napper {
    let loop: LoopScheduler

    init(loop: LoopScheduler) { self.loop = loop }

    nonisolated var unownedExecutor: UnownedSerialExecutor { loop.asUnownedSerialExecutor() }

    /// Sleeps `duration`; returns how long the sleep took by the continuous clock.
    func nap(_ duration: Duration) async throws -> Duration {
        let start = ContinuousClock.now
        try await Task.sleep(for: duration)
        return start.duration(to: .now)
    }
}

/// A serial executor that is a `SchedulingExecutor`: runs its actors' jobs on a loop and counts the
/// sleeps the runtime hands it (serving them on the loop). The probe of whether the runtime asks an
/// actor's executor for a `Task.sleep` in the actor's methods (on Swift 6.3.1 it does not).
private final class CountingSleepExecutor: SerialExecutor, SchedulingExecutor {
    let loop: LoopScheduler
    let sleeps = Atomic<Int>(0)

    init(loop: LoopScheduler) { self.loop = loop }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        loop.schedule { job.runSynchronously(on: self.asUnownedSerialExecutor()) }
    }

    func enqueue<C: Clock>(_ job: consuming ExecutorJob, at instant: C.Instant, tolerance: C.Duration?, clock: C) {
        sleeps.add(1, ordering: .relaxed)
        loop.enqueue(job, at: instant, tolerance: tolerance, clock: clock)
    }

    func asUnownedSerialExecutor() -> UnownedSerialExecutor { UnownedSerialExecutor(ordinary: self) }
}

/// An actor on a ``CountingSleepExecutor``.
private actor ProbedNapper {
    let executor: CountingSleepExecutor

    init(executor: CountingSleepExecutor) { self.executor = executor }

    nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    func nap() async throws {
        try await Task.sleep(for: .milliseconds(1))
    }
}

/// How many of `sleeps` plain 1 ms sleeps, in a task that prefers `loop`, returned early by the
/// clock they slept on (`clock`).
private func earlySleeps<C: Clock>(_ sleeps: Int, on loop: LoopScheduler, clock: C) async throws -> Int
where C.Duration == Duration {
    try await Task(executorPreference: loop) {
        var early = 0
        for _ in 0..<sleeps {
            let start = clock.now
            try await clock.sleep(until: start.advanced(by: .milliseconds(1)), tolerance: nil)
            if start.duration(to: clock.now) < .milliseconds(1) { early += 1 }
        }
        return early
    }.value
}

/// Starts `body`, whose first suspension is a plain `Task.sleep`, in a task that prefers `loop`, and
/// returns once the task has suspended in it: the task, and the loop's timer count seen by an
/// action the task queued just before its sleep — which runs after the task's job suspended, so
/// the count is exact however loaded the machine is (no window to catch by polling).
private func startSleeper<Value: Sendable>(
    on loop: LoopScheduler,
    _ body: @escaping @Sendable () async throws -> Value
) async -> (sleeper: Task<Value, any Error>, timersFiled: Int) {
    let (filed, continuation) = AsyncStream<Int>.makeStream()
    let sleeper = Task(executorPreference: loop) {
        loop.schedule {
            continuation.yield(loop.core.timers.count)
            continuation.finish()
        }
        return try await body()
    }
    return (sleeper, await filed.first { _ in true } ?? -1)
}

/// The loop's timers fired since `before`, once the loop published them (statistics lag a batch).
private func firedSince(_ before: Int, atLeast expected: Int, _ loop: LoopScheduler) async -> Int {
    await eventually { loop.statistics.timersFired - before >= expected }
    return loop.statistics.timersFired - before
}

/// Trait `ExperimentalExecutors`: a plain `Task.sleep` in a task that prefers the loop wakes from
/// the loop's timers (`SchedulingExecutor`), never early, never dropped — also across shutdown.
@Suite("Task.sleep served by the loop (trait ExperimentalExecutors)")
struct LoopSleepExecutorTests {
    @Test("2,000 sequential 1 ms Task.sleeps in a task preferring the loop are all fired by the loop, none early")
    func sequentialSleeps() async throws {
        let loop = try LoopScheduler(name: "sleep-executor")
        let before = loop.statistics.timersFired
        let early = try await earlySleeps(2_000, on: loop, clock: ContinuousClock())
        #expect(early == 0)
        #expect(await firedSince(before, atLeast: 2_000, loop) == 2_000)
        await loop.shutdown()
    }

    @Test("Sleeps on SuspendingClock (the loop's own clock) and ContinuousClock: fired by the loop, none early by their clock")
    func bothClocks() async throws {
        let loop = try LoopScheduler(name: "sleep-clocks")
        let before = loop.statistics.timersFired
        #expect(try await earlySleeps(200, on: loop, clock: SuspendingClock()) == 0)
        #expect(try await earlySleeps(200, on: loop, clock: ContinuousClock()) == 0)
        #expect(await firedSince(before, atLeast: 400, loop) == 400)
        await loop.shutdown()
    }

    @Test("A sleep's tolerance is a leeway: it may coalesce, never fire early")
    func tolerance() async throws {
        let loop = try LoopScheduler(name: "sleep-tolerance")
        let before = loop.statistics.timersFired
        let elapsed = try await Task(executorPreference: loop) {
            let start = ContinuousClock.now
            try await Task.sleep(for: .milliseconds(20), tolerance: .milliseconds(5))
            return start.duration(to: .now)
        }.value
        #expect(elapsed >= .milliseconds(20))
        #expect(await firedSince(before, atLeast: 1, loop) == 1)
        await loop.shutdown()
    }

    @Test("A task sleeping 1 s while the loop shuts down after 200 ms wakes at 1 s, not earlier, not never")
    func shutdownWhileSleeping() async throws {
        let loop = try LoopScheduler(name: "sleep-shutdown")
        let start = ContinuousClock.now
        let (sleeper, filed) = await startSleeper(on: loop) {
            let start = ContinuousClock.now
            try await Task.sleep(for: .seconds(1))
            return start.duration(to: .now)
        }
        // The wake-up is one of the loop's timers before the loop shuts down.
        #expect(filed == 1)
        try await Task.sleep(for: .milliseconds(200))
        let shutdownBegan = ContinuousClock.now
        let fired = loop.statistics.timersFired
        await loop.shutdown()
        if start.duration(to: shutdownBegan) < .seconds(1) {
            // Not due when the shutdown began: the loop did not fire it (a loaded machine may
            // have come this far only after the deadline).
            #expect(loop.statistics.timersFired == fired)
        }
        let slept = try await sleeper.value
        #expect(slept >= .seconds(1))
    }

    @Test("A Task.sleep that begins after the loop closed wakes at its deadline")
    func sleepAfterClose() async throws {
        let loop = try LoopScheduler(name: "sleep-closed")
        await loop.shutdown()
        let fired = loop.statistics.timersFired
        let slept = try await Task(executorPreference: loop) {
            let start = ContinuousClock.now
            try await Task.sleep(for: .milliseconds(100))
            return start.duration(to: .now)
        }.value
        #expect(slept >= .milliseconds(100))
        #expect(loop.statistics.timersFired == fired)
    }

    @Test("A cancelled sleep's wake-up stays a pending timer until its deadline, then fires")
    func cancelledSleepStaysPending() async throws {
        let loop = try LoopScheduler(name: "sleep-cancelled")
        let before = loop.statistics.timersFired
        let start = ContinuousClock.now
        let (sleeper, filed) = await startSleeper(on: loop) {
            do {
                try await Task.sleep(for: .seconds(2))
                return false
            } catch {
                return error is CancellationError
            }
        }
        #expect(filed == 1)
        let cancelled = ContinuousClock.now
        sleeper.cancel()
        let threw = try await sleeper.value
        if start.duration(to: cancelled) < .seconds(2) { #expect(threw, "cancelled before its deadline") }
        // The executor is never told: the wake-up waits for its deadline.
        let pending = await onLoop(loop) { loop.core.timers.count }
        if start.duration(to: .now) < .seconds(2) { #expect(pending == 1) }
        #expect(await eventually { loop.statistics.timersPending == 0 })
        #expect(start.duration(to: .now) >= .seconds(2))
        #expect(await firedSince(before, atLeast: 1, loop) == 1)
        await loop.shutdown()
    }

    @Test("An actor pinned to the loop: its Task.sleep reaches the loop only through the calling task's preference (Swift 6.3.1)")
    func actorSleeps() async throws {
        let loop = try LoopScheduler(name: "sleep-actor")
        let napper = Napper(loop: loop)
        let before = loop.statistics.timersFired
        // From a task with no preference: the runtime does not ask the actor's executor.
        for _ in 0..<10 { #expect(try await napper.nap(.milliseconds(1)) >= .milliseconds(1)) }
        await onLoop(loop) {}
        #expect(loop.statistics.timersFired == before)
        // From a task that prefers the loop: the preference serves the sleep.
        let naps = try await Task(executorPreference: loop) {
            var naps: [Duration] = []
            for _ in 0..<10 { naps.append(try await napper.nap(.milliseconds(1))) }
            return naps
        }.value
        #expect(naps.allSatisfy { $0 >= .milliseconds(1) })
        #expect(await firedSince(before, atLeast: 10, loop) == 10)
        await loop.shutdown()
    }

    @Test("Swift 6.3.1 never asks an actor's own executor for a sleep in its methods, even one that is a SchedulingExecutor")
    func actorExecutorNotAsked() async throws {
        let loop = try LoopScheduler(name: "sleep-probe")
        let executor = CountingSleepExecutor(loop: loop)
        let napper = ProbedNapper(executor: executor)
        for _ in 0..<10 { try await napper.nap() }
        // A toolchain that starts asking the actor's executor fails here: then the loop's actor
        // executor can serve such sleeps too (Docs/Design.md §8.9).
        #expect(executor.sleeps.load(ordering: .relaxed) == 0)
        await loop.shutdown()
    }
}
#endif
