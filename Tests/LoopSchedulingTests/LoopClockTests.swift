import AsyncAlgorithms
import Foundation
import LoopSchedulingTestSupport
import Scheduling
import Synchronization
import Testing

@testable import LoopScheduling

/// A real client of `SchedulerClock` on a loop: swift-async-algorithms' own operators, run on the
/// loop's timers (Docs/Design.md §8.6).
@Suite("swift-async-algorithms on a loop's clock")
struct LoopClockTests {
    @Test("AsyncTimerSequence on loop.clock: every element on its grid point or later, never early")
    func timerSequence() async throws {
        let loop = try LoopScheduler(name: "async-timer")
        let clock = loop.clock
        let start = clock.now
        var offsets: [Duration] = []
        for await instant in AsyncTimerSequence(interval: .milliseconds(5), clock: clock) {
            offsets.append(start.duration(to: clock.now))
            #expect(clock.now >= instant, "an element came before its instant")
            if offsets.count == 4 { break }
        }
        for (index, offset) in offsets.enumerated() {
            #expect(offset >= .milliseconds(5 * (index + 1)), "element \(index + 1) came \(offset) after the start")
        }
        await loop.shutdown()
    }

    @Test("debounce on loop.clock: a burst yields only its last value, after the quiet interval")
    func debounce() async throws {
        let loop = try LoopScheduler(name: "debounce")
        let clock = loop.clock
        let (input, feed) = AsyncStream<Int>.makeStream()
        let seen = LockedValue<[(value: Int, after: Duration)]>([])
        let start = clock.now
        let consumer = Task {
            for await value in input.debounce(for: .milliseconds(200), clock: clock) {
                let now = clock.now
                seen.withLock { $0.append((value, start.duration(to: now))) }
            }
        }
        // A burst far shorter than the interval: only its last value survives, once the input
        // stayed quiet for the interval.
        feed.yield(1)
        feed.yield(2)
        feed.yield(3)
        #expect(await eventually { !seen.withLock { $0 }.isEmpty })
        feed.yield(4)
        feed.finish()
        await consumer.value
        let values = seen.withLock { $0 }
        #expect(values.map(\.value) == [3, 4])
        if let first = values.first {
            #expect(first.after >= .milliseconds(200), "the burst's value came \(first.after) after it, before the quiet interval")
        }
        await loop.shutdown()
    }
}
