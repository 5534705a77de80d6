#if compiler(>=6.3) && ExperimentalExecutors && os(Linux)
import Foundation
import LoopSchedulingTestSupport
import Scheduling
import Synchronization
import Testing

/// Trait `ExperimentalExecutors`: a plain `Task.sleep` in a task that prefers a `TestScheduler`
/// runs on virtual time; in one that prefers a queue scheduler it is one of the queue's timers.
@Suite("Task.sleep served by the test and queue schedulers (trait ExperimentalExecutors)")
struct SleepWakeJobTests {
    @Test("Task.sleep(for: 5 s) in a task preferring a TestScheduler returns inside advance(by: 5 s), not at 4.999 s")
    func virtualTaskSleep() {
        let test = TestScheduler()
        let log = LockedValue<[String]>([])
        Task(executorPreference: test) {
            log.withLock { $0.append("start") }
            try await Task.sleep(for: .seconds(5))
            log.withLock { $0.append("5 s") }
            try await Task.sleep(until: .now + .seconds(1), clock: .suspending)
            log.withLock { $0.append("6 s") }
        }
        test.advance()
        #expect(log.withLock { $0 } == ["start"])
        #expect(test.pendingCount == 1, "the sleep's wake-up is one of the scheduler's timers")
        test.advance(by: .milliseconds(4_999))
        #expect(log.withLock { $0 } == ["start"])
        test.advance(by: .milliseconds(1))
        #expect(log.withLock { $0 } == ["start", "5 s"])
        test.advance(by: .milliseconds(999))
        #expect(log.withLock { $0 } == ["start", "5 s"])
        test.advance(by: .milliseconds(1))
        #expect(log.withLock { $0 } == ["start", "5 s", "6 s"])
        #expect(test.pendingCount == 0)
    }

    @Test("A cancelled Task.sleep on virtual time returns at once; its wake-up stays until its deadline")
    func virtualCancelledSleep() {
        let test = TestScheduler()
        let outcome = LockedValue<String?>(nil)
        let sleeper = Task(executorPreference: test) {
            do {
                try await Task.sleep(for: .seconds(5))
                outcome.withLock { $0 = "woke" }
            } catch {
                outcome.withLock { $0 = error is CancellationError ? "cancelled" : "\(error)" }
            }
        }
        test.advance()
        #expect(test.pendingCount == 1)
        sleeper.cancel()
        // The cancellation resumes the sleeper on the test scheduler, at the current virtual time.
        test.advance()
        #expect(outcome.withLock { $0 } == "cancelled")
        #expect(test.pendingCount == 1, "the scheduler is never told of the cancellation")
        test.advance(by: .seconds(5))
        #expect(test.pendingCount == 0)
    }

    @Test("Task.sleep in a task preferring a QueueScheduler is one of its timers, never early")
    func queueTaskSleep() async throws {
        let scheduler = QueueScheduler(name: "sleep-queue")
        let (filed, continuation) = AsyncStream<Int>.makeStream()
        let sleeper = Task(executorPreference: scheduler) {
            // Runs on the serial queue after this job suspended in its sleep: the count is exact.
            scheduler.schedule {
                continuation.yield(scheduler.timers.pendingCount)
                continuation.finish()
            }
            let start = ContinuousClock.now
            try await Task.sleep(for: .milliseconds(300))
            return start.duration(to: .now)
        }
        #expect(await filed.first { _ in true } == 1)
        #expect(try await sleeper.value >= .milliseconds(300))
        #expect(scheduler.timers.pendingCount == 0)
    }

    @Test("Task.sleep in a task preferring a ConcurrentQueueScheduler returns no earlier than its deadline")
    func concurrentQueueTaskSleep() async throws {
        let scheduler = ConcurrentQueueScheduler(name: "sleep-concurrent")
        let slept = try await Task(executorPreference: scheduler) {
            let start = ContinuousClock.now
            for _ in 0..<20 { try await Task.sleep(for: .milliseconds(1)) }
            return start.duration(to: .now)
        }.value
        #expect(slept >= .milliseconds(20))
        #expect(scheduler.timers.pendingCount == 0)
    }
}
#endif
