import AsyncAlgorithms
import Foundation
import Scheduling
import Synchronization
import Testing

/// An actor pinned to a test scheduler: its methods run inside `advance`.
private actor VirtualCounter {
    let test: TestScheduler
    var count = 0

    init(test: TestScheduler) { self.test = test }

    nonisolated var unownedExecutor: UnownedSerialExecutor { test.asUnownedSerialExecutor() }

    func bump() -> Int {
        count += 1
        return count
    }
}

/// Rule 12: one virtual time for callbacks and async code (Docs/Design.md §8.7). Every expectation is
/// checked right after `advance` returns: no yields, no waiting, no polling — a task that prefers
/// the test scheduler and awaits only it has run as far as virtual time allows.
@Suite("One virtual time (rule 12)")
struct VirtualTimeAsyncTests {
    @Test("advance runs a task that prefers the test scheduler through its sleeps, exactly as far as time allows")
    func sleepsRunInsideAdvance() {
        let test = TestScheduler()
        let log = LockedValue<[String]>([])
        Task(executorPreference: test) {
            log.withLock { $0.append("start") }
            try await test.sleep(for: .seconds(5))
            log.withLock { $0.append("5 s") }
            try await test.sleep(for: .seconds(5))
            log.withLock { $0.append("10 s") }
        }
        #expect(log.withLock { $0 }.isEmpty, "a job ran before time was advanced")
        test.advance()
        #expect(log.withLock { $0 } == ["start"])
        test.advance(by: .seconds(4))
        #expect(log.withLock { $0 } == ["start"])
        test.advance(by: .seconds(1))
        #expect(log.withLock { $0 } == ["start", "5 s"])
        test.advance(by: .seconds(5))
        #expect(log.withLock { $0 } == ["start", "5 s", "10 s"])
        #expect(test.pendingCount == 0)
    }

    @Test("Timers, actions and resumed tasks interleave in virtual-time order, equal times in scheduling order")
    func oneOrder() {
        let test = TestScheduler()
        let log = LockedValue<[String]>([])
        test.schedule(after: .seconds(2)) { log.withLock { $0.append("timer at 2 s") } }
        Task(executorPreference: test) {
            try await test.sleep(for: .seconds(1))
            log.withLock { $0.append("task at 1 s") }
            // Due at 2 s too, but scheduled after the timer: it runs after it.
            try await test.sleep(for: .seconds(1))
            log.withLock { $0.append("task at 2 s") }
        }
        test.schedule(after: .seconds(3)) { log.withLock { $0.append("timer at 3 s") } }
        test.advance(by: .seconds(3))
        #expect(log.withLock { $0 } == ["task at 1 s", "timer at 2 s", "task at 2 s", "timer at 3 s"])
    }

    @Test("An actor pinned to the test scheduler runs its methods inside advance")
    func actorOnVirtualTime() {
        let test = TestScheduler()
        let counter = VirtualCounter(test: test)
        let result = LockedValue<Int?>(nil)
        Task(executorPreference: test) {
            var last = 0
            for _ in 0..<3 {
                try await test.sleep(for: .seconds(1))
                last = await counter.bump()
            }
            result.withLock { $0 = last }
        }
        test.advance(by: .seconds(2))
        #expect(result.withLock { $0 } == nil)
        test.advance(by: .seconds(1))
        #expect(result.withLock { $0 } == 3)
    }

    @Test("ticks and withTimeout on virtual time: exact indices, TimeoutError exactly at the timeout")
    func ticksAndTimeout() {
        let test = TestScheduler()
        let ticks = LockedValue<[Int]>([])
        Task(executorPreference: test) {
            for await tick in test.ticks(every: .seconds(1)) {
                ticks.withLock { $0.append(tick) }
                if tick == 3 { break }
            }
        }
        let outcome = LockedValue<String?>(nil)
        Task(executorPreference: test) {
            do {
                try await test.withTimeout(.seconds(5)) { try await test.sleep(for: .seconds(10)) }
                outcome.withLock { $0 = "returned" }
            } catch let error as TimeoutError {
                outcome.withLock { $0 = "timed out after \(error.timeout)" }
            } catch {
                outcome.withLock { $0 = "\(error)" }
            }
        }
        test.advance(by: .seconds(2))
        #expect(ticks.withLock { $0 } == [1, 2])
        test.advance(by: .seconds(2))
        #expect(ticks.withLock { $0 } == [1, 2, 3])
        #expect(outcome.withLock { $0 } == nil)
        test.advance(by: .seconds(1))
        #expect(outcome.withLock { $0 } == "timed out after \(Duration.seconds(5))")
        #expect(test.pendingCount == 0, "a timer outlived its sequence or its timeout")
    }

    @Test("swift-async-algorithms' AsyncTimerSequence on TestScheduler.clock: one element per interval, inside advance")
    func asyncTimerSequence() {
        let test = TestScheduler()
        let clock = test.clock
        let seen = LockedValue<[Duration]>([])
        Task(executorPreference: test) {
            let start = clock.now
            for await instant in AsyncTimerSequence(interval: .seconds(1), clock: clock) {
                seen.withLock { $0.append(start.duration(to: instant)) }
                if seen.withLock({ $0.count }) == 3 { break }
            }
        }
        test.advance()
        test.advance(by: .milliseconds(2_999))
        #expect(seen.withLock { $0 } == [.seconds(1), .seconds(2)])
        test.advance(by: .milliseconds(1))
        #expect(seen.withLock { $0 } == [.seconds(1), .seconds(2), .seconds(3)])
    }

    // Not here: `debounce` on TestScheduler.clock. swift-async-algorithms runs debounce's upstream
    // and timer in unstructured tasks, which do not inherit the consumer's executor preference, so
    // they run on the global pool and `advance` cannot drive them to completion; a test would have
    // to yield and hope (the flakiness of today's test clocks). LoopClockTests runs debounce on a
    // loop's clock instead.
}
