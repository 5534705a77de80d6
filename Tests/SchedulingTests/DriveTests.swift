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
