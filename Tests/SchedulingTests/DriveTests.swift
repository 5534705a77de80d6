import Foundation
import Scheduling
import Synchronization
import Testing

/// Sessions with an idle timeout, generic over the scheduler that runs them: a `LoopScheduler` in
/// production, a `TestScheduler` in tests. The timer's action updates the actor's state with
/// `assumeIsolated` (the action runs on the actor's executor): no task per expiry.
private actor Sessions<S: DateScheduler & SerialExecutor> {
    let scheduler: S
    private var open: [Int: any Disposable] = [:]
    private(set) var expired: [Int] = []

    init(on scheduler: S) { self.scheduler = scheduler }

    nonisolated var unownedExecutor: UnownedSerialExecutor { scheduler.asUnownedSerialExecutor() }

    func touch(_ id: Int, idle: Duration = .seconds(30)) {
        open[id]?.dispose()
        open[id] = scheduler.schedule(after: idle) {
            self.assumeIsolated { $0.expire(id) }
        }
    }

    func isOpen(_ id: Int) -> Bool { open[id] != nil }

    private func expire(_ id: Int) {
        open[id] = nil
        expired.append(id)
    }
}

/// `TestScheduler.drive`: a test awaits code on the scheduler without a hand-made helper, and a
/// body that cannot finish throws instead of hanging.
@Suite("TestScheduler.drive")
struct DriveTests {
    @Test("A test awaits an actor pinned to the test scheduler through drive, and drives its idle timer")
    func awaitsPinnedActor() async throws {
        let test = TestScheduler()
        let sessions = Sessions(on: test)
        try await test.drive { await sessions.touch(1) }
        #expect(try await test.drive { await sessions.isOpen(1) })
        test.advance(by: .seconds(29))
        try await test.drive { await sessions.touch(1) }  // pushed back: due at 59 s now
        test.advance(by: .seconds(29))
        #expect(try await test.drive { await sessions.isOpen(1) })
        test.advance(by: .seconds(1))
        #expect(try await test.drive { await sessions.isOpen(1) } == false)
        #expect(try await test.drive { await sessions.expired } == [1])
        #expect(test.pendingCount == 0)
    }

    @Test("The body may advance the scheduler itself and go on at the new time")
    func bodyAdvances() async throws {
        let test = TestScheduler()
        let sessions = Sessions(on: test)
        let start = test.now
        let (before, after, elapsed) = try await test.drive {
            await sessions.touch(7, idle: .seconds(5))
            let before = await sessions.isOpen(7)
            test.advance(by: .seconds(5))
            let after = await sessions.isOpen(7)
            return (before, after, test.now.timeIntervalSince(start))
        }
        #expect(before)
        #expect(!after)
        #expect(elapsed == 5)
    }

    @Test("A body that waits on a timer nobody advances throws TestSchedulerStall naming the next due time")
    func stallsOnTimer() async throws {
        let test = TestScheduler()
        let cancelled = Atomic<Bool>(false)
        let start = test.now
        let error = try await #require(throws: TestSchedulerStall.self) {
            try await test.drive {
                do {
                    try await test.sleep(for: .seconds(30))
                } catch {
                    cancelled.store(error is CancellationError, ordering: .relaxed)
                    throw error
                }
            }
        }
        #expect(error.pendingCount == 1)
        #expect(error.nextDueDate == start.addingTimeInterval(30))
        #expect(error.now == start, "drive never moves the clock by itself")
        #expect(error.bodyEndedWhenCancelled)
        let sleepWasCancelled = cancelled.load(ordering: .relaxed)
        #expect(sleepWasCancelled, "the body's sleep was not cancelled")
        #expect(test.pendingCount == 0, "the cancelled sleep left its timer")
        #expect(test.now == start)
        #expect(error.description.contains("30.000000 s"))
    }

    @Test("A body that waits on work outside the scheduler throws TestSchedulerStall, and says it still waits")
    func stallsOnOutsideWork() async throws {
        let test = TestScheduler()
        let parked = Mutex<CheckedContinuation<Void, Never>?>(nil)
        let error = try await #require(throws: TestSchedulerStall.self) {
            try await test.drive {
                await withCheckedContinuation { continuation in parked.withLock { $0 = continuation } }
            }
        }
        #expect(error.pendingCount == 0)
        #expect(error.nextDueDate == nil)
        #expect(!error.bodyEndedWhenCancelled)
        // Let the parked body end (it runs on the test scheduler: drive it once more).
        parked.withLock { $0.take() }?.resume()
        test.advance()
    }

    @Test("drive returns what the body returns and rethrows what it throws")
    func resultAndError() async throws {
        struct Failure: Error, Equatable {}
        let test = TestScheduler()
        #expect(try await test.drive { 42 } == 42)
        await #expect(throws: Failure()) { try await test.drive { throw Failure() } }
    }
}

/// `drive` and `advance` stop work that never lets virtual time move.
@Suite("TestScheduler.drive stops a spin")
struct DriveSpinTests {
    @Test("A member spinning on Task.yield() at one instant stops drive with TestSchedulerSpin naming it")
    func spinningTask() async throws {
        let test = TestScheduler()
        test.instantActionLimit = 10_000  // the default, 1,000,000, in DriveCaptureCrashTests
        let spinner = Mutex<Task<Void, Never>?>(nil)
        let error = try await #require(throws: TestSchedulerSpin.self) {
            try await test.drive {
                // A task the body starts on the scheduler: it joins the scope, and each yield puts
                // its next job on the scheduler at the same instant.
                let task = Task(executorPreference: test) {
                    while !Task.isCancelled { await Task.yield() }  // polls, never lets the clock move
                }
                spinner.withLock { $0 = task }
                await task.value
            }
        }
        let task = try #require(spinner.withLock { $0 })
        #expect(error.taskID == GlobalEnqueueHook.taskID(of: task))
        #expect(error.actionCount == 10_000)
        #expect(error.now == test.now)
        #expect(error.description.contains("task \(GlobalEnqueueHook.taskID(of: task)) keeps making itself ready"))
        // The spinner stayed on the scheduler; cancelled, it ends at the next advance.
        task.cancel()
        test.advance()
        #expect(test.pendingCount == 0)
    }

    @Test("An action that schedules itself again at once stops drive with TestSchedulerSpin naming no task")
    func spinningAction() async throws {
        let test = TestScheduler()
        test.instantActionLimit = 1_000
        let ran = Atomic<Int>(0)
        @Sendable func again() {
            ran.add(1, ordering: .relaxed)
            test.schedule(again)
        }
        test.schedule(again)
        let error = try await #require(throws: TestSchedulerSpin.self) { try await test.drive {} }
        #expect(error.taskID == nil)
        #expect(error.actionCount == 1_000)
        // 999 of them and the body's job; the next is left pending.
        #expect(ran.load(ordering: .relaxed) == 999)
        #expect(test.pendingCount == 1, "what was pending stays pending")
        #expect(error.description.contains("an action keeps scheduling work at the current time"))
    }

    @Test("The limit counts actions at one instant only: a 1 ms periodic timer runs ten times the limit's ticks in one advance")
    func periodicTimerPastTheLimit() {
        // advance(by: .hours(1)) at the default limit, scaled down: 10,000 ticks against a limit of
        // 1,000 (3,600,000 against 1,000,000 take twenty seconds here, minutes under the sanitizer).
        let test = TestScheduler()
        test.instantActionLimit = 1_000
        let ticks = Atomic<Int>(0)
        let timer = test.schedule(after: .milliseconds(1), repeatingEvery: .milliseconds(1)) {
            ticks.add(1, ordering: .relaxed)
        }
        test.advance(by: .seconds(10))
        #expect(ticks.load(ordering: .relaxed) == 10_000)
        timer.dispose()
    }

    @Test("drive's result can be ignored (it is @discardableResult)")
    func discardableResult() async throws {
        let test = TestScheduler()
        try await test.drive { 42 }  // no warning under -warnings-as-errors
    }
}
