import Foundation
import Scheduling
import Synchronization
import Testing

/// A pinned-nowhere actor, to see where a sleeping task resumes.
private actor Counter {
    var value = 0
    func napAndCount(on scheduler: any DateScheduler, _ duration: Duration) async throws -> Bool {
        try await scheduler.sleep(for: duration)
        value += 1
        // Resumed on this actor (a default actor on the global pool), not inside the timer action.
        return Schedulers.current == nil
    }
}

extension Conformance {
    /// Rule 11: async waiting on every date scheduler (Docs/Design.md §8.3–8.6), through the default
    /// handler timers where a scheduler has no override.
    @Suite("11. Async waiting", .timeLimit(.minutes(10)))  // a hang guard, not a speed check: loaded runs took over 3 min
    struct AsyncWaiting {
        @Test("sleep(for:) never resumes early", arguments: SchedulerKind.async(SchedulerKind.dateSchedulers))
        func sleepNeverEarly(kind: SchedulerKind) async throws {
            try await Harness.with(kind) { harness in
                let scheduler = harness.dateScheduler
                for delay: Duration in [.microseconds(300), .milliseconds(1), .milliseconds(15)] {
                    let result = await harness.runTask { () -> Int64 in
                        let start = harness.monotonicNow()
                        try await scheduler.sleep(for: delay)
                        return harness.monotonicNow() - start
                    }
                    let elapsed = try #require(result, "the sleep did not end on \(kind)").get()
                    #expect(elapsed >= Nanoseconds.of(delay), "resumed \(Nanoseconds.of(delay) - elapsed) ns early")
                }
            }
        }

        @Test("sleep(until:) never resumes before the date", arguments: SchedulerKind.async(SchedulerKind.dateSchedulers))
        func sleepUntilNeverEarly(kind: SchedulerKind) async throws {
            try await Harness.with(kind) { harness in
                let scheduler = harness.dateScheduler
                let date = scheduler.now.addingTimeInterval(0.01)
                let result = await harness.runTask { () -> Int64 in
                    try await scheduler.sleep(until: date)
                    return harness.wallNow()
                }
                let woke = try #require(result, "the sleep did not end on \(kind)").get()
                #expect(woke >= harness.due(date), "resumed \(harness.due(date) - woke) ns before its date")
            }
        }

        @Test("A sleeping task resumes on its own executor, not in the timer's action", arguments: SchedulerKind.async(SchedulerKind.dateSchedulers))
        func sleepResumesOnCallersExecutor(kind: SchedulerKind) async throws {
            try await Harness.with(kind) { harness in
                guard kind != .test else { return }  // rule 12 covers the test scheduler's own tasks
                let counter = Counter()
                let scheduler = harness.dateScheduler
                let result = await harness.runTask { try await counter.napAndCount(on: scheduler, .milliseconds(2)) }
                let resumedOffScheduler = try #require(result, "the sleep did not end on \(kind)").get()
                #expect(resumedOffScheduler, "the task continued inside the timer action on \(kind)")
            }
        }

        @Test("Cancelling a sleeping task throws CancellationError at once and frees the timer", arguments: SchedulerKind.async(SchedulerKind.dateSchedulers))
        func cancelSleep(kind: SchedulerKind) async throws {
            try await Harness.with(kind) { harness in
                let scheduler = harness.dateScheduler
                let before = harness.pendingTimers
                let asleep = LockedValue(false)
                let running = harness.startTask {
                    asleep.withLock { $0 = true }
                    try await scheduler.sleep(for: .seconds(3600))
                }
                // Wait until the task is inside the sleep (its timer armed) before cancelling.
                #expect(await harness.eventually { asleep.withLock { $0 } })
                if let before { #expect(await harness.eventually { harness.pendingTimers == before + 1 }) }
                running.cancel()
                let result = try #require(await running.wait(timeout: .seconds(20)), "the cancelled sleep did not end on \(kind)")
                #expect(result.isCancellationError)
                if let before {
                    #expect(await harness.eventually { harness.pendingTimers == before }, "the timer was not disposed on \(kind)")
                }
            }
        }

        @Test("An already-cancelled task throws at once without scheduling", arguments: SchedulerKind.async(SchedulerKind.dateSchedulers))
        func alreadyCancelled(kind: SchedulerKind) async throws {
            try await Harness.with(kind) { harness in
                let scheduler = harness.dateScheduler
                let before = harness.pendingTimers
                let result = await harness.runTask { () -> Int? in
                    withUnsafeCurrentTask { $0?.cancel() }
                    try await scheduler.sleep(for: .seconds(3600))
                    return nil
                }
                let outcome = try #require(result)
                #expect(outcome.isCancellationError)
                #expect(harness.pendingTimers == before, "a timer was scheduled on \(kind)")
            }
        }

        @Test("ticks yields increasing indices, each no earlier than its grid point", arguments: SchedulerKind.async(SchedulerKind.dateSchedulers))
        func ticksOnTheGrid(kind: SchedulerKind) async throws {
            try await Harness.with(kind) { harness in
                let scheduler = harness.dateScheduler
                let period = Duration.milliseconds(5)
                let before = harness.pendingTimers
                let result = await harness.runTask { () -> [(Int, Int64)] in
                    let start = harness.monotonicNow()
                    var seen: [(Int, Int64)] = []
                    for await tick in scheduler.ticks(every: period) {
                        seen.append((tick, harness.monotonicNow() - start))
                        if seen.count == 4 { break }
                    }
                    return seen
                }
                let seen = try #require(result, "ticks did not arrive on \(kind)").get()
                #expect(seen.first.map { $0.0 >= 1 } ?? false)
                for (earlier, later) in zip(seen, seen.dropFirst()) { #expect(later.0 > earlier.0) }
                for (index, elapsed) in seen {
                    #expect(elapsed >= Int64(index) * Nanoseconds.of(period), "tick \(index) came early")
                }
                if let before {
                    #expect(await harness.eventually { harness.pendingTimers == before }, "ending iteration left the timer")
                }
            }
        }

        @Test("A consumer that falls behind gets the latest index: a gap, not a burst", arguments: SchedulerKind.async(SchedulerKind.dateSchedulers))
        func ticksSkipWhenBehind(kind: SchedulerKind) async throws {
            try await Harness.with(kind) { harness in
                let scheduler = harness.dateScheduler
                let period = Duration.milliseconds(4)
                let result = await harness.runTask { () -> [Int] in
                    var iterator = scheduler.ticks(every: period).makeAsyncIterator()
                    let first = await iterator.next()!
                    // Fall behind by ten periods, on the scheduler's own clock.
                    try await scheduler.sleep(for: period * 10)
                    let afterStall = await iterator.next()!
                    let next = await iterator.next()!
                    return [first, afterStall, next]
                }
                let indices = try #require(result, "ticks did not arrive on \(kind)").get()
                #expect(indices[1] >= indices[0] + 9, "the ticks missed during the stall were not skipped: \(indices)")
                #expect(indices[2] > indices[1])
            }
        }

        @Test("Cancelling the iterating task ends ticks and disposes the timer", arguments: SchedulerKind.async(SchedulerKind.dateSchedulers))
        func ticksCancelled(kind: SchedulerKind) async throws {
            try await Harness.with(kind) { harness in
                let scheduler = harness.dateScheduler
                let before = harness.pendingTimers
                let iterating = LockedValue(false)
                let running = harness.startTask { () -> Int in
                    var count = 0
                    iterating.withLock { $0 = true }
                    for await _ in scheduler.ticks(every: .seconds(3600)) { count += 1 }
                    return count
                }
                #expect(await harness.eventually { iterating.withLock { $0 } })
                if let before { #expect(await harness.eventually { harness.pendingTimers == before + 1 }) }
                running.cancel()
                let result = try #require(await running.wait(), "cancelled ticks did not end on \(kind)")
                let count = try result.get()
                #expect(count == 0)
                if let before {
                    #expect(await harness.eventually { harness.pendingTimers == before }, "the periodic timer was left")
                }
            }
        }

        @Test("withTimeout returns the operation's result and frees the timer", arguments: SchedulerKind.async(SchedulerKind.dateSchedulers))
        func timeoutNotReached(kind: SchedulerKind) async throws {
            try await Harness.with(kind) { harness in
                let scheduler = harness.dateScheduler
                let before = harness.pendingTimers
                let result = await harness.runTask { () -> (Int, Bool) in
                    let value = try await scheduler.withTimeout(.seconds(3600)) { 42 }
                    return (value, Task.isCancelled)
                }
                let (value, callerCancelled) = try #require(result).get()
                #expect(value == 42)
                #expect(!callerCancelled)
                if let before { #expect(await harness.eventually { harness.pendingTimers == before }) }
            }
        }

        @Test("withTimeout throws the operation's own error", arguments: SchedulerKind.async(SchedulerKind.dateSchedulers))
        func timeoutOperationError(kind: SchedulerKind) async throws {
            struct Failure: Error, Equatable {}
            try await Harness.with(kind) { harness in
                let scheduler = harness.dateScheduler
                let result = await harness.runTask { () -> Int in
                    try await scheduler.withTimeout(.seconds(3600)) { () async throws -> Int in throw Failure() }
                }
                let outcome = try #require(result)
                #expect(throws: Failure.self) { try outcome.get() }
            }
        }

        @Test("withTimeout: the timer first cancels the child, awaits it, throws TimeoutError", arguments: SchedulerKind.async(SchedulerKind.dateSchedulers))
        func timeoutReached(kind: SchedulerKind) async throws {
            try await Harness.with(kind) { harness in
                let scheduler = harness.dateScheduler
                let childEnded = LockedValue(false)
                let timeout = Duration.milliseconds(10)
                let result = await harness.runTask { () -> (Bool, Bool, Int64) in
                    let start = harness.monotonicNow()
                    do {
                        _ = try await scheduler.withTimeout(timeout) { () async throws -> Int in
                            defer { childEnded.withLock { $0 = true } }
                            try await scheduler.sleep(for: .seconds(3600))
                            return 1
                        }
                        Issue.record("withTimeout returned instead of throwing on \(kind)")
                    } catch let error as TimeoutError {
                        #expect(error == TimeoutError(timeout: timeout))
                    }
                    return (childEnded.withLock { $0 }, Task.isCancelled, harness.monotonicNow() - start)
                }
                let (ended, callerCancelled, elapsed) = try #require(result, "withTimeout did not end on \(kind)").get()
                #expect(ended, "withTimeout threw before its child ended")
                #expect(!callerCancelled, "withTimeout cancelled its caller")
                #expect(elapsed >= Nanoseconds.of(timeout), "timed out \(Nanoseconds.of(timeout) - elapsed) ns early")
            }
        }

        @Test("Cancelling withTimeout's caller cancels the child", arguments: SchedulerKind.async(SchedulerKind.dateSchedulers))
        func timeoutCallerCancelled(kind: SchedulerKind) async throws {
            try await Harness.with(kind) { harness in
                let scheduler = harness.dateScheduler
                let started = LockedValue(false)
                let running = harness.startTask { () -> Int in
                    try await scheduler.withTimeout(.seconds(3600)) { () async throws -> Int in
                        started.withLock { $0 = true }
                        try await scheduler.sleep(for: .seconds(3600))
                        return 1
                    }
                }
                #expect(await harness.eventually { started.withLock { $0 } })
                running.cancel()
                let result = try #require(await running.wait(), "the cancelled withTimeout did not end on \(kind)")
                #expect(result.isCancellationError, "expected the child's CancellationError, got \(result)")
            }
        }

        @Test("withTimeout of zero or less throws without starting the operation", arguments: SchedulerKind.async(SchedulerKind.dateSchedulers))
        func timeoutNotPositive(kind: SchedulerKind) async throws {
            try await Harness.with(kind) { harness in
                let scheduler = harness.dateScheduler
                let started = LockedValue(false)
                for timeout: Duration in [.zero, .seconds(-1)] {
                    let result = await harness.runTask { () -> Int in
                        try await scheduler.withTimeout(timeout) { () async throws -> Int in
                            started.withLock { $0 = true }
                            return 1
                        }
                    }
                    let outcome = try #require(result)
                    #expect(throws: TimeoutError(timeout: timeout)) { try outcome.get() }
                }
                #expect(!started.withLock { $0 })
            }
        }

        @Test("clock: now is the scheduler's monotonic time and sleep never resumes early", arguments: SchedulerKind.async(SchedulerKind.dateSchedulers))
        func clock(kind: SchedulerKind) async throws {
            try await Harness.with(kind) { harness in
                try await Self.checkClock(harness.dateScheduler, harness: harness, kind: kind)
            }
        }

        private static func checkClock<S: DateScheduler>(_ scheduler: S, harness: Harness, kind: SchedulerKind) async throws {
            do {
                let clock = scheduler.clock
                #expect(clock.minimumResolution == (kind == .test ? .zero : .nanoseconds(1)))
                let before = harness.monotonicNow()
                let now = clock.now.nanoseconds
                #expect(now >= before && now <= harness.monotonicNow())
                let result = await harness.runTask { () -> (Int64, Int64) in
                    let deadline = clock.now.advanced(by: .milliseconds(3))
                    try await clock.sleep(until: deadline, tolerance: .milliseconds(1))
                    return (clock.now.nanoseconds, deadline.nanoseconds)
                }
                let (woke, deadline) = try #require(result, "the clock's sleep did not end on \(kind)").get()
                #expect(woke >= deadline, "the clock's sleep resumed \(deadline - woke) ns early")
            }
        }
    }
}
