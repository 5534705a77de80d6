import AsyncAlgorithms
import Foundation
import Scheduling
import Synchronization
import Testing

/// `drive` takes in the tasks a library starts with a plain `Task {}`: swift-async-algorithms'
/// `debounce` and `AsyncTimerSequence` on `test.clock` run on virtual time, deterministically.
/// Each test repeats its scenario `iterations` times and counts the iterations that went wrong;
/// with `DRIVE_WITHOUT_SCOPE=1` every one of them fails.
@Suite("drive takes in library tasks")
struct LibraryTaskTests {
    @Test("debounce on test.clock: [3] at 300 ms, then [3] at 299 ms and [3, 4] at 300 ms after another element")
    func debounce() async throws {
        var tally = Tally(expecting: [[3], [3], [3, 4]])
        for _ in 0..<iterations {
            let test = makeTestScheduler()
            let (input, feed) = AsyncStream<Int>.makeStream()
            let out = Shared<[Int]>([])
            let seen = try await test.drive {
                Task(executorPreference: test) {
                    for await value in input.debounce(for: .milliseconds(300), clock: test.clock) {
                        out.withLock { $0.append(value) }
                    }
                }
                feed.yield(1)
                feed.yield(2)
                feed.yield(3)
                test.advance(by: .milliseconds(300))
                let first = out.withLock { $0 }
                feed.yield(4)
                test.advance(by: .milliseconds(299))
                let second = out.withLock { $0 }
                test.advance(by: .milliseconds(1))
                let third = out.withLock { $0 }
                feed.finish()  // debounce's task ends: nothing left on the scheduler
                return [first, second, third]
            }
            tally.record(seen)
            if !withoutScope { #expect(test.pendingCount == 0) }
        }
        #expect(tally.failures == 0, "\(tally)")
    }

    @Test("debounce driven from the test between drive calls: the tasks it took in stay on the scheduler")
    func debounceAfterDrive() async throws {
        var tally = Tally(expecting: [[], [3], [3, 4]])
        for _ in 0..<iterations {
            let test = makeTestScheduler()
            let (input, feed) = AsyncStream<Int>.makeStream()
            let out = Shared<[Int]>([])
            try await test.drive {
                _ = Task {
                    for await value in input.debounce(for: .milliseconds(300), clock: test.clock) {
                        out.withLock { $0.append(value) }
                    }
                }
            }
            feed.yield(1)
            feed.yield(2)
            feed.yield(3)
            test.advance(by: .milliseconds(299))
            let first = out.withLock { $0 }
            test.advance(by: .milliseconds(1))
            let second = out.withLock { $0 }
            feed.yield(4)
            test.advance(by: .milliseconds(300))
            let third = out.withLock { $0 }
            feed.finish()
            test.advance()
            tally.record([first, second, third])
        }
        #expect(tally.failures == 0, "\(tally)")
    }

    @Test("AsyncTimerSequence on test.clock, consumed in a plain Task {}: one tick per virtual second")
    func timerSequenceInPlainTask() async throws {
        var tally = Tally(expecting: [0, 1, 3, 5, 5])
        for _ in 0..<iterations {
            let test = makeTestScheduler()
            let ticks = Shared(0)
            let seen = try await test.drive {
                Task {
                    for await _ in AsyncTimerSequence(interval: .seconds(1), clock: test.clock) {
                        if ticks.withLock({
                            $0 += 1
                            return $0
                        }) == 5 {
                            break
                        }
                    }
                }
                var seen: [Int] = []
                test.advance(by: .milliseconds(999))
                seen.append(ticks.withLock { $0 })
                test.advance(by: .milliseconds(1))
                seen.append(ticks.withLock { $0 })
                test.advance(by: .seconds(2))
                seen.append(ticks.withLock { $0 })
                test.advance(by: .seconds(2))
                seen.append(ticks.withLock { $0 })
                test.advance(by: .seconds(10))  // the loop broke at 5: no timer left
                seen.append(ticks.withLock { $0 })
                return seen
            }
            tally.record(seen)
            if !withoutScope { #expect(test.pendingCount == 0) }
        }
        #expect(tally.failures == 0, "\(tally)")
    }

    @Test("AsyncTimerSequence in a plain Task {} with run(): every tick until the loop ends")
    func timerSequenceWithRun() async throws {
        var tally = Tally(expecting: [3, 3])
        for _ in 0..<iterations {
            let test = makeTestScheduler()
            let ticks = Shared(0)
            let start = test.now
            try await test.drive {
                _ = Task {
                    for await _ in AsyncTimerSequence(interval: .seconds(1), clock: test.clock) {
                        if ticks.withLock({
                            $0 += 1
                            return $0
                        }) == 3 {
                            break
                        }
                    }
                }
            }
            test.run()  // runs until no one-shot action is pending: the three sleeps, one after the other
            tally.record([ticks.withLock { $0 }, Int(test.now.timeIntervalSince(start))])
        }
        #expect(tally.failures == 0, "\(tally)")
    }
}

/// The documents' debounce example (README, Testing article): the consumer's task returns what it
/// saw, awaited inside `drive`.
@Suite("drive: the documents' debounce example")
struct DocumentedDebounceTests {
    @Test("A consumer task awaited inside drive sees [3, 4]: 3 at 300 ms, 4 at 300 ms after it, nothing at 299 ms")
    func documentedDebounce() async throws {
        var tally = Tally(expecting: [3, 4])
        for _ in 0..<iterations {
            let test = makeTestScheduler()
            let (input, feed) = AsyncStream<Int>.makeStream()
            let values = try await test.drive {
                let consumer = Task(executorPreference: test) {
                    var seen: [Int] = []
                    for await value in input.debounce(for: .milliseconds(300), clock: test.clock) {
                        seen.append(value)
                    }
                    return seen
                }
                feed.yield(1)
                feed.yield(2)
                feed.yield(3)
                test.advance(by: .milliseconds(300))
                feed.yield(4)
                test.advance(by: .milliseconds(299))
                test.advance(by: .milliseconds(1))
                feed.finish()
                return await consumer.value
            }
            tally.record(values)
        }
        #expect(tally.failures == 0, "\(tally)")
    }
}
