import AsyncAlgorithms
import Foundation
import LoopSchedulingTestSupport
import Scheduling
import Synchronization
import Testing

@testable import LoopEngine
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

    @Test("debounce on loop.clock: a burst yields only its last value, once the loop's clock passed the quiet interval")
    func debounce() async throws {
        // On a clock the test steps: every element of the burst restarts the same quiet interval,
        // however late debounce takes it, and the interval ends only when the test says so.
        let stepped = SteppableClock()
        let origin = Nanoseconds.monotonicNow()
        stepped.freezeMonotonic(at: origin)
        let loop = try LoopScheduler(name: "debounce", clock: stepped)
        let clock = loop.clock
        let (stream, feed) = AsyncStream<Int>.makeStream()
        let input = PullCountingStream(stream)
        let seen = LockedValue<[(value: Int, after: Duration)]>([])
        let start = clock.now
        let consumer = Task {
            for await value in input.debounce(for: .milliseconds(200), clock: clock) {
                let now = clock.now
                seen.withLock { $0.append((value, start.duration(to: now))) }
            }
        }
        feed.yield(1)
        feed.yield(2)
        feed.yield(3)
        // Asking for a fourth element, debounce has handled the third.
        #expect(await eventually { input.pulls >= 4 }, "debounce did not take the burst")
        stepped.freezeMonotonic(at: origin + 199_999_999)
        _ = await onLoop(loop) { 0 }  // the loop has read the clock a nanosecond short of the interval
        #expect(seen.withLock { $0 }.isEmpty, "a value came before the quiet interval ended")
        stepped.freezeMonotonic(at: origin + 200_000_000)
        loop.schedule {}  // the stepped clock is read when the loop next wakes
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

/// An `AsyncStream` that counts how often its consumer asked for the next element: a consumer that
/// asks for one more than it was given has handled every element before.
struct PullCountingStream<Element: Sendable>: AsyncSequence, Sendable {
    private let base: AsyncStream<Element>
    private let counter = PullCounter()

    init(_ base: AsyncStream<Element>) {
        self.base = base
    }

    var pulls: Int { counter.count.load(ordering: .relaxed) }

    func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(base: base.makeAsyncIterator(), counter: counter)
    }

    struct AsyncIterator: AsyncIteratorProtocol {
        var base: AsyncStream<Element>.AsyncIterator
        let counter: PullCounter

        mutating func next() async -> Element? {
            counter.count.add(1, ordering: .relaxed)
            return await base.next()
        }
    }
}

final class PullCounter: Sendable {
    let count = Atomic<Int>(0)
}
