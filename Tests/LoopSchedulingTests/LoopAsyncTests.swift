import Dispatch
import Foundation
import LoopSchedulingTestSupport
import Scheduling
import Synchronization
import Testing

@testable import LoopEngine
@testable import LoopScheduling

/// The async layer on the loop (Docs/Design.md §8.3–8.5): what only a scheduler that shuts down can
/// show. The rule ("Shutdown seen by async callers", Concurrency article): a wait the shutdown ends,
/// or one begun after it, throws SchedulerShutdownError, never CancellationError; ticks end.
@Suite("LoopScheduler async waiting")
struct LoopAsyncTests {
    @Test("A sleep pending when the loop shuts down throws SchedulerShutdownError; one begun after throws at once")
    func sleepAtShutdown() async throws {
        let loop = try LoopScheduler(name: "sleepers")
        // An hour, not seconds: blocking tests in parallel can starve the pool (this test and the
        // wait below) for longer than a 30 s sleep, which then fired unseen (under the sanitizers).
        let sleeper = Task { () -> String in
            do {
                try await loop.sleep(for: .seconds(3_600))
                return "woke"
            } catch is SchedulerShutdownError {
                return Task.isCancelled ? "cancelled and shut down" : "shut down"
            } catch {
                return "\(error)"
            }
        }
        // Wait until the sleep's timer is in the loop, not a guess.
        #expect(await eventually { loop.statistics.timersPending == 1 })
        await loop.shutdown()
        #expect(await sleeper.value == "shut down")
        await #expect(throws: SchedulerShutdownError()) { try await loop.sleep(for: .milliseconds(1)) }
        await #expect(throws: SchedulerShutdownError()) { try await loop.sleep(until: loop.now) }
        await #expect(throws: SchedulerShutdownError()) { try await loop.clock.sleep(until: loop.clock.now) }
    }

    @Test("withTimeout when the loop shuts down: the operation is cancelled and awaited, then SchedulerShutdownError")
    func timeoutAtShutdown() async throws {
        let loop = try LoopScheduler(name: "timeout-shutdown")
        let sawCancellation = Atomic<Bool>(false)
        let caller = Task { () -> String in
            do {
                return try await loop.withTimeout(.seconds(3_600)) { () async throws -> String in
                    do {
                        try await Task.sleep(for: .seconds(3_600))
                    } catch {
                        sawCancellation.store(true, ordering: .relaxed)
                        throw error
                    }
                    return "finished"
                }
            } catch is SchedulerShutdownError {
                return Task.isCancelled ? "cancelled" : "shut down"
            } catch {
                return "\(error)"
            }
        }
        #expect(await eventually { loop.statistics.timersPending == 1 })
        await loop.shutdown()
        #expect(await caller.value == "shut down")
        let operationSawCancellation = sawCancellation.load(ordering: .relaxed)
        #expect(operationSawCancellation, "the operation was not cancelled")
        // After the shutdown: the operation starts cancelled, the caller gets the shutdown error.
        let after = await Task { () -> String in
            do {
                return try await loop.withTimeout(.milliseconds(50)) { () async throws -> String in
                    try Task.checkCancellation()
                    return "ran uncancelled"
                }
            } catch {
                return "\(type(of: error))"
            }
        }.value
        #expect(after == "SchedulerShutdownError")
    }

    @Test("ticks after the loop shut down ends at once, and the caller is not cancelled")
    func ticksAfterShutdown() async throws {
        let loop = try LoopScheduler(name: "ticks-after")
        await loop.shutdown()
        let (count, cancelled) = await Task { () -> (Int, Bool) in
            var count = 0
            for await _ in loop.ticks(every: .milliseconds(1)) { count += 1 }
            return (count, Task.isCancelled)
        }.value
        #expect(count == 0)
        #expect(!cancelled)
    }

    @Test("ticks ends (nil) when the loop shuts down")
    func ticksEndAtShutdown() async throws {
        let loop = try LoopScheduler(name: "ticks")
        let seen = Atomic<Int>(0)
        let consumer = Task { () -> Int in
            var last = 0
            for await index in loop.ticks(every: .milliseconds(2)) {
                last = index
                seen.store(index, ordering: .relaxed)
            }
            return last
        }
        #expect(await eventually { seen.load(ordering: .relaxed) >= 3 })
        await loop.shutdown()
        let last = await consumer.value
        #expect(last >= 3)
    }

    @Test("Cancelling a sleeping task frees its timer on the loop at once")
    func cancelFreesTimer() async throws {
        let loop = try LoopScheduler(name: "cancel-sleep")
        // An hour: see `sleepAtShutdown`.
        let sleeper = Task { try await loop.sleep(for: .seconds(3_600)) }
        #expect(await eventually { loop.statistics.timersPending == 1 })
        sleeper.cancel()
        await #expect(throws: CancellationError.self) { try await sleeper.value }
        #expect(await eventually { loop.statistics.timersPending == 0 }, "the cancelled sleep's timer stayed in the heap")
        await loop.shutdown()
    }

    @Test("withTimeout on the loop: a quick operation returns and leaves no timer; a slow one throws TimeoutError")
    func timeouts() async throws {
        let loop = try LoopScheduler(name: "timeouts")
        // From a task on the loop, so the operation's child runs there too: on the global pool,
        // blocking tests running in parallel can starve a quick operation past even 30 s (seen
        // under the thread sanitizer on 2 cores), and then TimeoutError is the right answer.
        let values = try await Task(executorPreference: loop) {
            var values: [Int] = []
            for _ in 0..<1_000 { values.append(try await loop.withTimeout(.seconds(30)) { 42 }) }
            return values
        }.value
        #expect(values == Array(repeating: 42, count: 1_000))
        #expect(await eventually { loop.statistics.timersPending == 0 })
        await #expect(throws: TimeoutError(timeout: .milliseconds(5))) {
            try await loop.withTimeout(.milliseconds(5)) { try await Task.sleep(for: .seconds(30)) }
        }
        await loop.shutdown()
    }
}
