#if compiler(>=6.3) && ExperimentalExecutors && os(Linux)
@_spi(ExperimentalCustomExecutors) import _Concurrency
import Foundation
@_spi(SchedulerEngine) import Scheduling
import LoopSchedulingTestSupport
import Synchronization
import Testing

@testable import LoopEngine
@testable import LoopScheduling

/// `LoopExecutorFactory`'s two executors, each made directly (a test process cannot name a
/// `DefaultExecutorFactory`: `Examples/LoopFactory` runs the factory as a program does, in
/// `make test-experimental`).
@Suite("LoopExecutorFactory's executors")
struct LoopExecutorFactoryTests {
    /// The index of the default executor's loop running the caller; nil off its loops.
    private static func loopIndex(_ executor: LoopDefaultExecutor) -> Int? {
        guard let current = Schedulers.current else { return nil }
        return executor.loops.firstIndex { $0 === current }
    }

    /// Waits until every open loop ran what was queued before (its thread's marking included).
    private static func settle(_ executor: LoopDefaultExecutor) async {
        for loop in executor.loops where loop.core.lifecycle.isOpen {
            await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                _ = loop.schedule { done.resume() }
            }
        }
    }

    @Test("a job enqueued on one of the loops stays on that loop: yields and child tasks")
    func jobsStayOnTheirLoop() async {
        let executor = LoopDefaultExecutor(count: 2)
        await Self.settle(executor)
        let seen = await Task(executorPreference: executor) { () async -> [Int?] in
            var seen = [Self.loopIndex(executor)]
            for _ in 0..<100 {
                await Task.yield()
                seen.append(Self.loopIndex(executor))
            }
            seen.append(await Task(executorPreference: executor) { Self.loopIndex(executor) }.value)
            return seen
        }.value
        #expect(seen.allSatisfy { $0 != nil && $0 == seen[0] }, "\(seen)")
        for loop in executor.loops { await loop.shutdown() }
    }

    @Test("from another thread: the first loop whose queue is empty, then the next")
    func spreadsFromOtherThreads() async {
        let executor = LoopDefaultExecutor(count: 2)
        await Self.settle(executor)
        // Loop 0 is busy inside an action; its queue from other threads is empty, so the first
        // job still goes there and waits; the second finds that queue holding the first.
        let gate = SchedulerGate()
        await gate.hold(executor.loops[0])
        let first = Task(executorPreference: executor) { Self.loopIndex(executor) }
        let second = Task(executorPreference: executor) { Self.loopIndex(executor) }
        #expect(await second.value == 1)
        gate.letGo()
        #expect(await first.value == 0)
        // Idle again: work from outside goes to the first loop.
        await Self.settle(executor)
        #expect(await Task(executorPreference: executor) { Self.loopIndex(executor) }.value == 0)
        for loop in executor.loops { await loop.shutdown() }
    }

    @Test("jobs run as the default executor's: 100 nonisolated calls enqueue nothing more")
    func jobsRunAsTheDefaultExecutor() async {
        let executor = LoopDefaultExecutor(count: 1)
        await Self.settle(executor)
        let (before, after, sum) = await Task(executorPreference: executor) { () async -> (Int, Int, Int) in
            let before = EnqueueProbe.count(executor)
            var sum = 0
            for index in 0..<100 { sum &+= await nonisolatedStep(index) }
            return (before, EnqueueProbe.count(executor), sum)
        }.value
        #expect(sum == 5_050)
        // Run with another identity, every return to the task's nonisolated code would go back
        // through the executor's queue.
        #expect(after - before <= 1, "\(after - before) enqueues for 100 nonisolated calls")
        await executor.loops[0].shutdown()
    }

    @Test("a default loop that was shut down takes no more work while another is open")
    func aClosedLoopTakesNoWork() async throws {
        let executor = LoopDefaultExecutor(count: 2)
        await Self.settle(executor)
        await executor.loops[0].shutdown()
        for _ in 0..<10 {
            #expect(await Task(executorPreference: executor) { Self.loopIndex(executor) }.value == 1)
        }
        // A sleep's wake-up too: one of loop 1's timers.
        let before = executor.loops[1].statistics.timersFired
        try await Task(executorPreference: executor) { try await Task.sleep(for: .milliseconds(1)) }.value
        // Published at the end of the loop's batch, which may still be running when the task's
        // value arrives.
        #expect(await eventually { executor.loops[1].statistics.timersFired - before >= 1 })
        await executor.loops[1].shutdown()
    }

    @Test("a sleep in a task on the default executor is one of its loops' timers, never early")
    func sleepsAreLoopTimers() async throws {
        let executor = LoopDefaultExecutor(count: 1)
        let loop = executor.loops[0]
        let before = loop.statistics.timersFired
        let slept = try await Task(executorPreference: executor) { () async throws -> Duration in
            let start = ContinuousClock.now
            for _ in 0..<5 { try await Task.sleep(for: .milliseconds(2)) }
            return start.duration(to: .now)
        }.value
        #expect(slept >= .milliseconds(10))
        // Published at the end of the loop's batch, which may still be running when the task's
        // value arrives.
        #expect(await eventually { loop.statistics.timersFired - before >= 5 })
        await loop.shutdown()
    }

    static var threadNumber: UInt { UInt(bitPattern: Int(bitPattern: pthread_self())) }

    /// A main executor made on a thread of this test's own (its loop runs on the thread that
    /// made it, as the factory's runs on the main thread). `beforeRun` runs on that thread first;
    /// `run()` starts once `gate` is signalled (at once without one). The task ends when `run()`
    /// returned, with the thread's number.
    private static func mainExecutorOnOwnThread(
        gate: DispatchSemaphore? = nil,
        beforeRun: @escaping @Sendable (LoopMainExecutor) -> Void = { _ in }
    ) async throws -> (executor: LoopMainExecutor, thread: UInt, running: Task<UInt, Never>) {
        let made = LockedValue<(LoopMainExecutor, UInt)?>(nil)
        let created = AsyncGate()
        let running = Task {
            await onOwnThread(name: "test.main") {
                let executor = LoopMainExecutor(drainsDispatchMainQueue: false)
                beforeRun(executor)
                made.withLock { $0 = (executor, threadNumber) }
                created.open()
                gate?.wait()
                try? executor.run()
                return threadNumber
            }
        }
        await created.wait()
        let (executor, thread) = try #require(made.withLock { $0 })
        return (executor, thread, running)
    }

    @Test("main-actor-like calls between two actors of the main executor enqueue nothing more")
    func mainExecutorJobsRunAsIt() async throws {
        let (executor, _, running) = try await Self.mainExecutorOnOwnThread()
        let first = PinnedCounter(executor: executor), second = PinnedCounter(executor: executor)
        let (before, after) = await first.callOther(second, times: 100)
        // Run with another identity, each call to `second` would be a hop through the queue.
        #expect(after - before == 0, "\(after - before) enqueues for 100 calls within the executor")
        executor.stop()
        _ = await running.value
    }

    @Test("stop() before run(): run() returns once what was queued ran")
    func stopBeforeRun() async throws {
        let stopped = DispatchSemaphore(value: 0)
        let ran = LockedValue(false)
        let (executor, _, running) = try await Self.mainExecutorOnOwnThread(gate: stopped) { executor in
            _ = executor.loop.schedule { ran.withLock { $0 = true } }
        }
        executor.stop()
        stopped.signal()
        _ = await running.value
        #expect(ran.withLock { $0 })
    }

    @Test("the main executor keeps jobs enqueued before run(), runs them isolated, and stop() ends run()")
    func mainExecutorRunsUntilStopped() async throws {
        let startRunning = DispatchSemaphore(value: 0)
        let (executor, madeThread, running) = try await Self.mainExecutorOnOwnThread(gate: startRunning)
        let pinned = PinnedCounter(executor: executor)
        // Enqueued before run(): kept in the loop's queue.
        let call = Task { await pinned.increment() }
        #expect(await eventually { executor.loop.core.remote.mayHaveItems })
        startRunning.signal()
        let (value, isolated, thread) = await call.value
        #expect(value == 1)
        #expect(isolated == true)
        #expect(thread == madeThread)
        executor.stop()
        #expect(await running.value == madeThread)
    }
}

/// A nonisolated async step: calling it from a task is a switch to the generic executor.
@inline(never)
private func nonisolatedStep(_ value: Int) async -> Int { value &+ 1 }

/// An actor whose executor is a ``LoopMainExecutor``, as the main actor's is under the factory.
private actor PinnedCounter {
    let executor: LoopMainExecutor
    var count = 0

    init(executor: LoopMainExecutor) { self.executor = executor }

    nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    /// Calls `other`, an actor of the same executor, `times` times; the executor's enqueue count
    /// before and after.
    func callOther(_ other: PinnedCounter, times: Int) async -> (Int, Int) {
        let before = EnqueueProbe.count(executor)
        for _ in 0..<times { _ = await other.increment() }
        return (before, EnqueueProbe.count(executor))
    }

    func increment() -> (Int, Bool?, UInt) {
        count += 1
        return (count, executor.isIsolatingCurrentContext(), LoopExecutorFactoryTests.threadNumber)
    }
}

/// A one-shot signal a test awaits.
private final class AsyncGate: Sendable {
    private let state = Mutex<(open: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))

    func open() {
        let waiters = state.withLock { state in
            state.open = true
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    func wait() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let resumeNow = state.withLock { state in
                if state.open { return true }
                state.waiters.append(continuation)
                return false
            }
            if resumeNow { continuation.resume() }
        }
    }
}
#endif
