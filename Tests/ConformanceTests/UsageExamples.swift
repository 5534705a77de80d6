import Dispatch
import Foundation
import LoopScheduling
import LoopSchedulingTestSupport
import Scheduling
import Testing

// Usage examples (the earlier README's), kept as tests of what they promise. The examples of
// the README and the DocC articles themselves are compiled and run from an outside consumer
// package by `make examples`. and run,
// each followed by checks of what the snippet promises. `print`, `process` and `ping` are shadowed
// to record what the examples do instead of writing to the test log.

private let printed = LockedValue<[String]>([])
private func print(_ items: Any...) {
    printed.withLock { $0.append(items.map { "\($0)" }.joined(separator: " ")) }
}
private let processed = LockedValue<[Int]>([])
private func process(_ chunk: Int) {
    processed.withLock { $0.append(chunk) }
}
private let pings = LockedValue(0)
private func ping() { pings.withLock { $0 += 1 } }
private func hasPrinted(_ line: String) -> Bool { printed.withLock { $0.contains(line) } }
actor Session {
    let loop: LoopScheduler
    var requests = 0
    init(loop: LoopScheduler) { self.loop = loop }
    nonisolated var unownedExecutor: UnownedSerialExecutor { loop.asUnownedSerialExecutor() }
    func handle() -> Int {  // on the loop thread, Schedulers.current is the loop
        requests += 1
        return requests
    }
}

@Suite("Usage examples", .serialized)
struct UsageExamples {
    @Test("Dispatch-backed schedulers")
    func dispatchSchedulers() async throws {
        let database = QueueScheduler(name: "db", priority: .low)
        let timeout = database.schedule(after: .seconds(5)) { print("gave up") }
        database.schedule {
            print("on db:", database.isCurrent)  // Schedulers.current is `database` here
            timeout.dispose()  // before it started: it never starts, its closure is released now
        }

        Schedulers.immediate.schedule { print("runs before schedule returns") }

        let workers = ConcurrentQueueScheduler(name: "workers", priority: .high)
        for chunk in 0..<4 { workers.schedule { process(chunk) } }

        let heartbeat = database.schedule(after: .zero, repeatingEvery: .seconds(1), leeway: .milliseconds(50)) {
            ping()
        }
        heartbeat.dispose()
        // The immediate scheduler ran its action before `schedule` returned: nothing waited yet.
        #expect(hasPrinted("runs before schedule returns"))
        // The db task ran (FIFO) before this one, as the current scheduler, and disposed the timeout.
        await withCheckedContinuation { done in database.schedule { done.resume() } }
        #expect(hasPrinted("on db: true"))
        #expect(timeout.isDisposed)
        #expect(heartbeat.isDisposed)
        // "It never starts, its closure is released now": neither timer is left in the heap, so
        // "gave up" can never print and the heartbeat can never tick again.
        #expect(database.timers.pendingCount == 0, "a disposed timer is still in the scheduler's heap")
        #expect(!hasPrinted("gave up"))
        #expect(pings.withLock { $0 } <= 1, "the heartbeat ticked after it was disposed")
        // Every chunk was processed, once.
        #expect(await eventually { processed.withLock { $0.count } >= 4 })
        #expect(processed.withLock { $0 }.sorted() == [0, 1, 2, 3])
    }

    @Test("Test scheduler")
    func testScheduler() {
        let scheduler = TestScheduler()
        let fired = LockedValue(false)
        scheduler.schedule(after: .seconds(30)) { fired.withLock { $0 = true } }
        scheduler.advance(by: .seconds(29))
        assert(!fired.withLock { $0 })
        scheduler.advance(by: .seconds(1))
        assert(fired.withLock { $0 })
        // The `assert`s above vanish in release builds: the same promises, checked here.
        #expect(fired.withLock { $0 })
        #expect(scheduler.now == Date(timeIntervalSinceReferenceDate: 30), "virtual time stopped elsewhere")
        #expect(scheduler.pendingCount == 0)
        let early = TestScheduler()
        let firedEarly = LockedValue(false)
        early.schedule(after: .seconds(30)) { firedEarly.withLock { $0 = true } }
        early.advance(by: .seconds(29))
        #expect(!firedEarly.withLock { $0 }, "fired before its virtual deadline")
    }

    @Test("LoopScheduler")
    func loopScheduler() async throws {
        // The synchronous shutdown() blocks its caller until the loop is closed: a thread made for it.
        let (loop, requestTimeout, ticker) = try await onOwnThread { () throws -> (LoopScheduler, any Disposable, any Disposable) in
            let loop = try LoopScheduler(name: "timeouts")
            let requestTimeout = loop.schedule(after: .seconds(30)) { print("request timed out") }
            requestTimeout.dispose()  // the usual fate of a timeout: closure freed now, slot within 10 ms

            let ticker = loop.schedule(
                after: .zero,
                repeatingEvery: .milliseconds(10),
                countingMissedTicks: { missed in
                    if missed > 0 { print("fell behind by \(missed) ticks") }
                }
            )
            ticker.dispose()

            loop.schedule { print("on the loop thread, current:", loop.isCurrent) }
            loop.syncShutdown()  // runs accepted tasks, disposes timers, closes the loop, joins the thread
            return (loop, requestTimeout, ticker)
        }
        // The accepted task ran, on the loop as its current scheduler, before shutdown returned.
        #expect(hasPrinted("on the loop thread, current: true"))
        #expect(loop.statistics.tasksRun == 1)
        #expect(requestTimeout.isDisposed && ticker.isDisposed)
        #expect(!hasPrinted("request timed out"))
        #expect(loop.statistics.timersPending == 0, "a timer outlived shutdown")
        // After shutdown the scheduler is inert: scheduling returns an already-disposed disposable.
        let late = loop.schedule { print("after shutdown") }
        #expect(late.isDisposed)
        #expect(!hasPrinted("after shutdown"))
    }

    @Test("LoopScheduler on the caller's thread, and groups")
    func loopRunAndGroup() async throws {
        // run(name:) and the synchronous shutdown() block their caller: a thread made for them.
        try await onOwnThread {
            try LoopScheduler.run(name: "server") { loop in
                loop.schedule(after: .milliseconds(10)) {
                    print("serving on the main thread")
                    loop.syncShutdown()  // run(name:) returns once the loop is closed
                }
            }

            let group = try LoopSchedulerGroup(count: 2, name: "io")
            group.next().schedule { print("round robin") }
            group.syncShutdown()
        }
        // run(name:) returned only once its loop had run the timer and shut down.
        #expect(hasPrinted("serving on the main thread"))
        // The group's shutdown ran the task it had accepted before returning.
        #expect(hasPrinted("round robin"))
    }

    @Test("Swift concurrency")
    func concurrency() async throws {
        let loop = try LoopScheduler(name: "sessions")
        let session = Session(loop: loop)
        // One timer on the loop's heap, dropped once the operation returns (within 10 ms from another
        // thread, without waking the loop for it); TimeoutError if it fires.
        let served = try await loop.withTimeout(.seconds(30)) { await session.handle() }
        try await loop.sleep(for: .milliseconds(5))  // never early; cancelling throws at once
        for await tick in loop.ticks(every: .milliseconds(2)) where tick >= 3 { break }  // latest index only
        await loop.shutdown()  // suspends, never blocks a cooperative thread

        let test = TestScheduler()
        let finished = LockedValue(false)
        Task(executorPreference: test) {
            try await test.sleep(for: .seconds(5))
            finished.withLock { $0 = true }
        }
        test.advance(by: .seconds(5))  // the task has finished when this returns: no yields, no polling
        #expect(served == 1)
        #expect(finished.withLock { $0 })
    }
}
