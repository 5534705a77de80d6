import AsyncAlgorithms
import Foundation
import Scheduling
import Synchronization
import Testing

/// Two suites that run in parallel in one test process: one takes library tasks in with `drive`,
/// the other creates plain tasks and awaits them on the global pool. The scope must take in none
/// of the other suite's jobs (the global-enqueue hook is process-wide). Run them together many
/// times: `swift test --filter 'ScopeBesidePoolTests|PoolBesideScopeTests'`.
@Suite("A scope beside plain tasks: the scope's side")
struct ScopeBesidePoolTests {
    @Test("Every iteration of the debounce scenario takes in the same number of jobs and tasks")
    func stableCounts() async throws {
        var counts: Set<[Int]> = []
        var tally = Tally(expecting: [[1], [1, 2]])
        for _ in 0..<iterations {
            let test = makeTestScheduler()
            let (input, feed) = AsyncStream<Int>.makeStream()
            let out = Shared<[Int]>([])
            let seen = try await test.drive {
                Task {
                    for await value in input.debounce(for: .seconds(1), clock: test.clock) {
                        out.withLock { $0.append(value) }
                    }
                }
                feed.yield(1)
                test.advance(by: .seconds(1))
                let first = out.withLock { $0 }
                feed.yield(2)
                test.advance(by: .seconds(1))
                feed.finish()
                return [first, out.withLock { $0 }]
            }
            test.advance()
            tally.record(seen)
            counts.insert([test.takenInJobCount, test.takenInTaskCount, test.outsideWakeUpCount])
        }
        #expect(tally.failures == 0, "\(tally)")
        if !withoutScope {
            // A job of the other suite taken in would show as a higher count in some iteration.
            #expect(counts.count == 1, "jobs, tasks, outside wake-ups taken in per iteration: \(counts)")
            #expect(counts.first?[1] == 4, "debounce's task, its two child tasks and the consumer")
            #expect(counts.first?[2] == 0, "the body feeds the stream: nothing came from outside")
        }
    }
}

@Suite("A scope beside plain tasks: the pool's side")
struct PoolBesideScopeTests {
    /// Whether the calling code runs on the global pool, as a plain task should: not inside a test
    /// scheduler's work, and not a member of any scope.
    private static func onThePool() -> Bool {
        Schedulers.current == nil && !TaskCapture.isTakenIn(GlobalEnqueueHook.currentTaskID)
    }

    @Test("Plain tasks, their children and their continuations stay on the global pool")
    func plainTasks() async throws {
        var misplaced = 0
        for _ in 0..<iterations {
            let (stream, feed) = AsyncStream<Int>.makeStream()
            let consumer = Task {
                var onPool = Self.onThePool()
                for await _ in stream {
                    onPool = onPool && Self.onThePool()
                }
                return onPool
            }
            let producer = Task.detached {
                var onPool = Self.onThePool()
                for value in 0..<5 {
                    feed.yield(value)
                    await Task.yield()
                    onPool = onPool && Self.onThePool()
                }
                feed.finish()
                let child = await Task { Self.onThePool() }.value
                async let grandchild = Self.onThePool()
                let inGroup = await withTaskGroup(of: Bool.self) { group in
                    group.addTask { Self.onThePool() }
                    return await group.reduce(true) { $0 && $1 }
                }
                let grandchildOnPool = await grandchild
                return onPool && child && grandchildOnPool && inGroup
            }
            let consumerOnPool = await consumer.value
            let producerOnPool = await producer.value
            let onPool = consumerOnPool && producerOnPool
            if !onPool { misplaced += 1 }
        }
        #expect(misplaced == 0, "\(misplaced) of \(iterations) iterations ran a plain task's job off the pool")
    }

    @Test("A real sleep in a plain task outside any scope is untouched")
    func realSleep() async throws {
        var misplaced = 0
        for _ in 0..<max(1, iterations / 10) {
            let onPool = await Task {
                try? await Task.sleep(for: .microseconds(50))
                return Self.onThePool()
            }.value
            if !onPool { misplaced += 1 }
        }
        #expect(misplaced == 0)
    }
}
