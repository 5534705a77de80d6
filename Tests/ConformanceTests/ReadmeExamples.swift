import Dispatch
import Foundation
import LoopScheduling
import Scheduling
import Testing

// The README's examples, verbatim between the `README:` markers, so CI proves they compile and run.
// `print` is shadowed to record what the examples print instead of writing to the test log.

private let printed = LockedValue<[String]>([])
private func print(_ items: Any...) {
    printed.withLock { $0.append(items.map { "\($0)" }.joined(separator: " ")) }
}
private func process(_ chunk: Int) {}
private func ping() {}

@Suite("README examples", .serialized)
struct ReadmeExamples {
    @Test("Dispatch-backed schedulers")
    func dispatchSchedulers() throws {
        let done = DispatchSemaphore(value: 0)
        // README: dispatch
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
        // README: end
        database.schedule { done.signal() }
        done.wait()
        #expect(printed.withLock { $0 }.contains("on db: true"))
        #expect(printed.withLock { $0 }.contains("runs before schedule returns"))
        #expect(timeout.isDisposed)
    }

    @Test("Test scheduler")
    func testScheduler() {
        // README: test
        let scheduler = TestScheduler()
        let fired = LockedValue(false)
        scheduler.schedule(after: .seconds(30)) { fired.withLock { $0 = true } }
        scheduler.advance(by: .seconds(29))
        assert(!fired.withLock { $0 })
        scheduler.advance(by: .seconds(1))
        assert(fired.withLock { $0 })
        // README: end
        #expect(fired.withLock { $0 })
    }

    @Test("LoopScheduler")
    func loopScheduler() throws {
        // README: loop
        let loop = try LoopScheduler(name: "timeouts")
        let requestTimeout = loop.schedule(after: .seconds(30)) { print("request timed out") }
        requestTimeout.dispose()  // the usual fate of a timeout: slot and closure freed at once

        let ticker = loop.schedule(
            after: .zero,
            repeatingEvery: .milliseconds(10),
            countingMissedTicks: { missed in
                if missed > 0 { print("fell behind by \(missed) ticks") }
            }
        )
        ticker.dispose()

        loop.schedule { print("on the loop thread, current:", loop.isCurrent) }
        loop.shutdown()  // runs accepted tasks, disposes timers, closes the loop, joins the thread
        // README: end
        #expect(printed.withLock { $0 }.contains("on the loop thread, current: true"))
    }

    @Test("LoopScheduler on the caller's thread, and groups")
    func loopRunAndGroup() throws {
        // README: run
        try LoopScheduler.run(name: "server") { loop in
            loop.schedule(after: .milliseconds(10)) {
                print("serving on the main thread")
                loop.shutdown()  // run(name:) returns once the loop is closed
            }
        }

        let group = try LoopSchedulerGroup(count: 2, name: "io")
        group.next().schedule { print("round robin") }
        group.shutdown()
        // README: end
        #expect(printed.withLock { $0 }.contains("serving on the main thread"))
    }
}
