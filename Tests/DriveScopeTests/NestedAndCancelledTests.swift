import Foundation
import Scheduling
import Synchronization
import Testing

/// Tasks started by tasks `drive` took in, however deep, and cancellation inside the scope.
@Suite("drive takes in nested tasks and cancellation")
struct NestedAndCancelledTests {
    @Test("Nested unstructured tasks (Task, Task.detached, a task group inside) run on virtual time")
    func nestedTasks() async throws {
        let expected = [["outer"], ["outer", "middle"], ["outer", "middle", "child", "inner"]]
        var tally = Tally(expecting: expected)
        for _ in 0..<iterations {
            let test = makeTestScheduler()
            let log = Shared<[String]>([])
            let seen = try await test.drive {
                Task {
                    try await test.sleep(for: .seconds(1))
                    log.withLock { $0.append("outer") }
                    Task.detached {
                        try await test.clock.sleep(for: .seconds(1))
                        log.withLock { $0.append("middle") }
                        Task {
                            await withTaskGroup(of: Void.self) { group in
                                group.addTask {
                                    try? await test.sleep(for: .seconds(1))
                                    log.withLock { $0.append("child") }
                                }
                            }
                            log.withLock { $0.append("inner") }
                        }
                    }
                }
                var seen: [[String]] = []
                for _ in 0..<3 {
                    test.advance(by: .seconds(1))
                    seen.append(log.withLock { $0 })
                }
                return seen
            }
            tally.record(seen)
            if !withoutScope {
                #expect(test.takenInTaskCount == 4)  // outer, middle, inner and the group's child
                #expect(test.pendingCount == 0)
            }
        }
        #expect(tally.failures == 0, "\(tally)")
    }

    @Test("Cancelling a taken-in task: its sleep throws, the catch runs inside the next advance, its timer is freed")
    func cancellation() async throws {
        var tally = Tally(expecting: ["cancelled at 3 s", "pending 0"])
        for _ in 0..<iterations {
            let test = makeTestScheduler()
            let start = test.now
            let outcome = Shared<String?>(nil)
            let seen = try await test.drive {
                let worker = Task {
                    do {
                        try await test.sleep(for: .seconds(10))
                        outcome.withLock { $0 = "slept" }
                    } catch {
                        let at = Int(test.now.timeIntervalSince(start))
                        outcome.withLock { $0 = error is CancellationError ? "cancelled at \(at) s" : "\(error)" }
                    }
                }
                test.advance(by: .seconds(3))
                worker.cancel()
                test.advance()  // runs what the cancellation made ready: the worker's catch
                return [outcome.withLock { $0 } ?? "still running", "pending \(test.pendingCount)"]
            }
            tally.record(seen)
        }
        #expect(tally.failures == 0, "\(tally)")
    }

    @Test("Cancelling the consumer of a debounce inside the scope ends debounce's own task and timers")
    func cancelledDebounce() async throws {
        var tally = Tally(expecting: ["ended", "pending 0"])
        for _ in 0..<iterations {
            let test = makeTestScheduler()
            let (input, feed) = AsyncStream<Int>.makeStream()
            let ended = Shared(false)
            let seen = try await test.drive {
                let consumer = Task {
                    for await _ in input.debounce(for: .seconds(1), clock: test.clock) {}
                    ended.withLock { $0 = true }
                }
                feed.yield(1)
                test.advance(by: .milliseconds(500))  // debounce's timer is armed, due at 1 s
                consumer.cancel()
                test.advance()
                return [ended.withLock { $0 } ? "ended" : "still running", "pending \(test.pendingCount)"]
            }
            feed.finish()
            tally.record(seen)
        }
        #expect(tally.failures == 0, "\(tally)")
    }

    @Test("A task started by a timer's action while drive runs is taken in too")
    func taskStartedByTimerAction() async throws {
        var tally = Tally(expecting: [false, true])
        for _ in 0..<iterations {
            let test = makeTestScheduler()
            let done = Shared(false)
            test.schedule {
                Task {
                    try? await test.sleep(for: .seconds(1))
                    done.withLock { $0 = true }
                }
            }
            let before = try await test.drive { done.withLock { $0 } }  // drive runs the action
            test.advance(by: .seconds(1))
            tally.record([before, done.withLock { $0 }])
        }
        #expect(tally.failures == 0, "\(tally)")
    }
}
