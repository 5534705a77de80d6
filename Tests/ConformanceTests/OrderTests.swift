import Foundation
import Scheduling
import Synchronization
import Testing

extension Conformance {
    @Suite("3. Order")
    struct Order {
        @Test("Tasks from one thread start in scheduling order, one at a time", arguments: SchedulerKind.serial)
        func fifoAndSerial(kind: SchedulerKind) async throws {
            try await Harness.with(kind) { harness in
                let log = Recorder<Int>(harness)
                let running = Atomic<Int>(0)
                let overlapped = Atomic<Bool>(false)
                for index in 0..<1000 {
                    harness.scheduler.schedule {
                        if running.add(1, ordering: .acquiringAndReleasing).newValue > 1 {
                            overlapped.store(true, ordering: .relaxed)
                        }
                        log.append(index)
                        running.subtract(1, ordering: .acquiringAndReleasing)
                    }
                }
                #expect(await log.wait(for: 1000))
                #expect(log.all == Array(0..<1000))
                let overlappedValue = overlapped.load(ordering: .relaxed)
                #expect(!overlappedValue, "two actions of a serial scheduler overlapped")
            }
        }

        @Test("Timers start in deadline order", arguments: SchedulerKind.dateSchedulers)
        func deadlineOrder(kind: SchedulerKind) async throws {
            try await Harness.with(kind) { harness in
                let log = Recorder<Int>(harness)
                // Each deadline lies between the clock read just before its schedule call and the
                // one just after, plus its delay: a loaded machine may spread the calls, so the
                // order promised is the deadlines', not the delays'.
                var windows: [Int: ClosedRange<Int64>] = [:]
                let firstCall = harness.monotonicNow()
                for delay in [50, 10, 40, 20, 30] {
                    let before = harness.monotonicNow()
                    harness.dateScheduler.schedule(after: .milliseconds(delay)) { log.append(delay) }
                    let after = harness.monotonicNow()
                    let offset = Int64(delay) * 1_000_000
                    windows[delay] = (before + offset)...(after + offset)
                }
                #expect(await log.wait(for: 5))
                let started = log.all
                #expect(started.sorted() == [10, 20, 30, 40, 50])
                for (earlier, later) in zip(started, started.dropFirst()) {
                    // A timer may start after another only if its deadline can be the later one.
                    #expect(windows[later]!.upperBound >= windows[earlier]!.lowerBound, "\(later) ms was due before \(earlier) ms")
                }
                if windows[30]!.upperBound - 30_000_000 - firstCall < 10_000_000 {
                    // All five calls within one 10 ms step: the delays' order is the deadlines'.
                    #expect(started == [10, 20, 30, 40, 50])
                }
            }
        }

        @Test("Equal deadlines start in scheduling order", arguments: SchedulerKind.serial)
        func equalDeadlinesFIFO(kind: SchedulerKind) async throws {
            try await Harness.with(kind) { harness in
                let log = Recorder<Int>(harness)
                let date = harness.dateScheduler.now.addingTimeInterval(0.05)
                for index in 0..<100 {
                    harness.dateScheduler.schedule(at: date) { log.append(index) }
                }
                #expect(await log.wait(for: 100))
                #expect(log.all == Array(0..<100))
            }
        }

        @Test(
            "Periodic and one-shot timers with equal deadlines start in scheduling order",
            arguments: SchedulerKind.serial
        )
        func equalDeadlinesMixed(kind: SchedulerKind) async throws {
            try await Harness.with(kind) { harness in
                let log = Recorder<String>(harness)
                let scheduler = harness.dateScheduler
                let date = scheduler.now.addingTimeInterval(0.05)
                var periodic: [any Disposable] = []
                for index in 0..<20 {
                    if index % 2 == 0 {
                        scheduler.schedule(at: date) { log.append("once \(index)") }
                    } else {
                        let tick = Atomic<Bool>(false)
                        // Only the first tick is logged: the next one is an hour away anyway.
                        periodic.append(
                            scheduler.schedule(at: date, repeatingEvery: .seconds(3600)) {
                                if !tick.exchange(true, ordering: .relaxed) { log.append("tick \(index)") }
                            }
                        )
                    }
                }
                #expect(await log.wait(for: 20))
                for disposable in periodic { disposable.dispose() }
                #expect(log.all == (0..<20).map { $0 % 2 == 0 ? "once \($0)" : "tick \($0)" })
            }
        }

        @Test(
            "Work scheduled from inside an action runs after it returns, not inline",
            arguments: SchedulerKind.neverInline
        )
        func nestedRunsAfter(kind: SchedulerKind) async throws {
            try await Harness.with(kind) { harness in
                let log = Recorder<String>(harness)
                let scheduler = harness.scheduler
                scheduler.schedule {
                    scheduler.schedule { log.append("inner") }
                    log.append("outer end")
                }
                #expect(await log.wait(for: 2))
                #expect(log.all == ["outer end", "inner"])
            }
        }
    }
}
