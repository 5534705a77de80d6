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
    @Test("Task.sleep(for: 5 s) in a task preferring a TestScheduler comes due at exactly 5 s of virtual time, not at 5 s − 1 µs")
    func virtualTaskSleep() {
        let test = TestScheduler()
        let log = LockedValue<[String]>([])
        // The real clock just before each sleep: the time from there to the end of the `advance`
        // that ran the call bounds the hand-over's, on which the promise depends.
        let sleptAt = LockedValue<ContinuousClock.Instant?>(nil)
        Task(executorPreference: test) {
            log.withLock { $0.append("start") }
            sleptAt.withLock { $0 = .now }
            try await Task.sleep(for: .seconds(5))
            log.withLock { $0.append("5 s") }
            sleptAt.withLock { $0 = .now }
            try await Task.sleep(until: .now + .seconds(1), clock: .suspending)
            log.withLock { $0.append("6 s") }
        }
        test.advance()
        var early = Self.earliest(handOverAtMost: sleptAt.withLock { $0! }.duration(to: .now))
        #expect(log.withLock { $0 } == ["start"])
        #expect(test.pendingCount == 1, "the sleep's wake-up is one of the scheduler's timers")
        test.advance(by: .seconds(5) - early)
        #expect(log.withLock { $0 } == ["start"], "not due before 5 s (less \(early) by the hand-over's real time)")
        test.advance(by: early)
        #expect(log.withLock { $0 } == ["start", "5 s"])
        early = Self.earliest(handOverAtMost: sleptAt.withLock { $0! }.duration(to: .now))
        test.advance(by: .seconds(1) - early)
        #expect(log.withLock { $0 } == ["start", "5 s"], "a sleep until an instant: its whole milliseconds too")
        test.advance(by: early)
        #expect(log.withLock { $0 } == ["start", "5 s", "6 s"])
        #expect(test.pendingCount == 0)
    }

    /// How far before its whole-millisecond duration a virtual `Task.sleep` may come due, at
    /// microsecond precision, when its hand-over took at most `handOver` of real time: 1 µs when
    /// the hand-over took at most 250 µs (the sleep is exact: 1 µs before it, it is not due), else
    /// the hand-over and 1 µs (it may come due up to the hand-over sooner).
    static func earliest(handOverAtMost handOver: Duration) -> Duration {
        let bound = Duration.nanoseconds(SleepWakeJob.handOverBound)
        guard handOver > bound else { return .microseconds(1) }
        let microseconds = (handOver / .microseconds(1)).rounded(.up)
        return .microseconds(microseconds + 1)
    }

    @Test("The virtual delay: the time left rounded up to the next whole millisecond within 250 µs, never down")
    func virtualDelayRounding() {
        let ms: Int64 = 1_000_000
        let bound = SleepWakeJob.handOverBound
        #expect(bound == 250_000)
        #expect(SleepWakeJob.virtualDelay(5_000 * ms) == 5_000 * ms, "a hand-over within the same nanosecond")
        #expect(SleepWakeJob.virtualDelay(5_000 * ms - 3_000) == 5_000 * ms, "a 5 s sleep handed over in 3 µs")
        #expect(SleepWakeJob.virtualDelay(5_000 * ms - bound) == 5_000 * ms, "handed over in exactly 250 µs")
        #expect(SleepWakeJob.virtualDelay(5_000 * ms - bound - 1) == 5_000 * ms - bound - 1, "in more: as it is")
        #expect(SleepWakeJob.virtualDelay(ms / 2 - 2_000) == ms / 2 - 2_000, "500 µs, 2 µs short: as it is")
        #expect(SleepWakeJob.virtualDelay(800_000) == ms, "800 µs: the next whole millisecond, 200 µs later")
        #expect(SleepWakeJob.virtualDelay(700_000) == 700_000, "700 µs: as it is")
        #expect(SleepWakeJob.virtualDelay(1) == 1, "1 ns: as it is")
        #expect(SleepWakeJob.virtualDelay(0) == 0)
        #expect(SleepWakeJob.virtualDelay(-3_000) == -3_000, "a past deadline: due now")
        #expect(SleepWakeJob.virtualDelay(Int64.max) == Int64.max, "a saturated sleep stays never due")
        #expect(SleepWakeJob.virtualDelay(Int64.max - 5) == Int64.max - 5, "no overflow near the top")
        // Every 997 ns (a prime, so the residues modulo 1 ms vary) over 3 ms around 0 and 5 s.
        for base in [0, 5_000 * ms] {
            for remaining in stride(from: base - ms, through: base + 2 * ms, by: 997) {
                let delay = SleepWakeJob.virtualDelay(remaining)
                #expect(delay >= remaining && delay - remaining <= bound, "\(remaining) -> \(delay): never shorter, at most 250 µs longer")
                #expect(delay == remaining || delay % ms == 0, "\(remaining) -> \(delay): rounded only to a whole millisecond")
                #expect(remaining <= 0 || remaining % ms < ms - bound || delay % ms == 0, "\(remaining): within 250 µs below a whole millisecond, rounded")
            }
        }
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
