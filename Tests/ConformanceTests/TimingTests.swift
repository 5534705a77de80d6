import Dispatch
import Foundation
import LoopSchedulingTestSupport
import Scheduling
import Synchronization
import Testing

extension Conformance {
    @Suite("4. Never early")
    struct NeverEarly {
        @Test("after: d starts no earlier than d after the call", arguments: SchedulerKind.dateSchedulers)
        func afterNeverEarly(kind: SchedulerKind) async throws {
            try await Harness.with(kind) { harness in
                let delays: [Duration] = [
                    .microseconds(200), .microseconds(999), .milliseconds(1), .milliseconds(10),
                    .milliseconds(25),
                ]
                let log = Recorder<(Int64, Int64)>(harness)
                for delay in delays {
                    let start = harness.monotonicNow()
                    harness.dateScheduler.schedule(after: delay) {
                        log.append((harness.monotonicNow() - start, Nanoseconds.of(delay)))
                    }
                }
                #expect(await log.wait(for: delays.count))
                for (elapsed, delay) in log.all {
                    #expect(elapsed >= delay, "fired \(delay - elapsed) ns early")
                }
            }
        }

        @Test("at: date starts no earlier than the wall clock reaching date", arguments: SchedulerKind.realTime(SchedulerKind.dateSchedulers))
        func atNeverEarly(kind: SchedulerKind) async throws {
            try await Harness.with(kind) { harness in
                let log = Recorder<(Int64, Int64)>(harness)
                for offset in [0.0005, 0.003, 0.02] {
                    let date = harness.dateScheduler.now.addingTimeInterval(offset)
                    harness.dateScheduler.schedule(at: date) {
                        log.append((harness.wallNow(), harness.due(date)))
                    }
                }
                #expect(await log.wait(for: 3))
                for (now, due) in log.all { #expect(now >= due, "fired \(due - now) ns before its date") }
            }
        }

        @Test("Zero, negative and past deadlines run as soon as possible", arguments: SchedulerKind.dateSchedulers)
        func pastDeadlinesRun(kind: SchedulerKind) async throws {
            try await Harness.with(kind) { harness in
                let log = Recorder<String>(harness)
                let scheduler = harness.dateScheduler
                scheduler.schedule(after: .zero) { log.append("zero") }
                scheduler.schedule(after: .seconds(-5)) { log.append("negative") }
                scheduler.schedule(after: .seconds(Int64.min)) { log.append("most negative") }
                scheduler.schedule(at: scheduler.now.addingTimeInterval(-60)) { log.append("past") }
                scheduler.schedule(at: .distantPast) { log.append("distant past") }
                #expect(await log.wait(for: 5, timeout: .seconds(5)))
                #expect(Set(log.all) == ["zero", "negative", "most negative", "past", "distant past"])
            }
        }

        @Test("The immediate scheduler's timers block until due, then run")
        func immediateTimersBlock() async throws {
            // The timers block their caller by design: a thread made for it.
            let (start, ranAt, date, wallAt) = await onOwnThread { () -> (Int64, Int64, Date, Date?) in
                let start = Nanoseconds.monotonicNow()
                let ranAt = LockedValue<Int64>(0)
                Schedulers.immediate.schedule(after: .milliseconds(15)) {
                    ranAt.withLock { $0 = Nanoseconds.monotonicNow() }
                }
                let date = Date().addingTimeInterval(0.01)
                let wallAt = LockedValue<Date?>(nil)
                Schedulers.immediate.schedule(at: date) { wallAt.withLock { $0 = Date() } }
                return (start, ranAt.withLock { $0 }, date, wallAt.withLock { $0 })
            }
            #expect(ranAt - start >= 15_000_000)
            #expect(try #require(wallAt) >= date)
        }
    }

    @Suite("5. Periodic")
    struct Periodic {
        @Test("Tick k starts no earlier than start + k·interval", arguments: SchedulerKind.dateSchedulers)
        func ticksOnTheGrid(kind: SchedulerKind) async throws {
            try await Harness.with(kind) { harness in
                let log = Recorder<Int64>(harness)
                let interval: Int64 = 10_000_000
                let start = harness.monotonicNow() + 5_000_000
                let disposable = harness.dateScheduler.schedule(
                    after: .milliseconds(5),
                    repeatingEvery: .milliseconds(10)
                ) {
                    log.append(harness.monotonicNow())
                }
                #expect(await log.wait(for: 8))
                disposable.dispose()
                Self.expectFixedRateTicks(log.all, start: start, interval: interval)
            }
        }

        /// The two exact properties of fixed-rate ticks that skip missed grid points:
        /// - the k-th tick runs for grid point k or a later one, so no earlier than `start + k·interval`
        ///   (`start` is read before scheduling: a lower bound of the real origin, which is all this
        ///   needs; this also catches a duplicate tick);
        /// - each tick is for a grid point after every point the tick two before it covered, so
        ///   `t[i+2] − t[i] > interval`, while a catch-up burst runs three ticks within microseconds.
        /// (Assigning ticks to grid cells counted from `start` is not exact: a late catch-up tick and
        /// the next on-time tick can share a cell when the origin is a few µs after `start`.)
        static func expectFixedRateTicks(_ ticks: [Int64], start: Int64, interval: Int64) {
            for (index, tick) in ticks.enumerated() {
                #expect(tick >= start + Int64(index) * interval, "tick \(index) started before its grid point")
            }
            for index in ticks.indices.dropLast(2) {
                let span = ticks[index + 2] - ticks[index]
                #expect(span > interval, "ticks \(index)…\(index + 2) ran within \(span) ns: a catch-up burst")
            }
        }

        @Test("An overdue periodic timer skips missed ticks instead of bursting", arguments: SchedulerKind.realTime(SchedulerKind.serial))
        func overdueDoesNotBurst(kind: SchedulerKind) async throws {
            try await Harness.with(kind) { harness in
                let log = Recorder<Int64>(harness)
                let interval: Int64 = 5_000_000
                let start = harness.monotonicNow()
                let count = Atomic<Int>(0)
                let disposable = harness.dateScheduler.schedule(after: .zero, repeatingEvery: .milliseconds(5)) {
                    log.append(harness.monotonicNow())
                    if count.add(1, ordering: .relaxed).newValue == 2, !kind.isVirtual {
                        // Stall the scheduler for ten intervals.
                        let until = Nanoseconds.monotonicNow() + 10 * interval
                        while Nanoseconds.monotonicNow() < until {}
                    }
                }
                #expect(await log.wait(for: 6))
                disposable.dispose()
                Self.expectFixedRateTicks(log.all, start: start, interval: interval)
                let cells = log.all.map { ($0 - start) / interval }
                if !kind.isVirtual {
                    #expect(cells[2] >= cells[1] + 10, "the tick after the stall was not moved to the next grid point")
                }
            }
        }

        @Test(
            "A periodic timer starting at a past date ticks at its interval, never back to back",
            arguments: SchedulerKind.dateSchedulers
        )
        func pastStartDate(kind: SchedulerKind) async throws {
            try await Harness.with(kind) { harness in
                for start in [Date.distantPast, harness.dateScheduler.now.addingTimeInterval(-3600)] {
                    let log = Recorder<Int64>(harness)
                    let disposable = harness.dateScheduler.schedule(at: start, repeatingEvery: .milliseconds(5)) {
                        log.append(harness.monotonicNow())
                    }
                    #expect(await log.wait(for: 4), "a periodic timer starting at \(start) did not tick")
                    disposable.dispose()
                    let ticks = log.all.prefix(4)
                    // The first tick may be aligned anywhere in its interval; the next three are one
                    // interval apart each, so the four span at least two intervals.
                    if let first = ticks.first, let last = ticks.last {
                        #expect(last - first >= 10_000_000, "ticks ran back to back: \(ticks.map { $0 - first })")
                    }
                }
            }
        }

        @Test("A sub-millisecond period stays periodic", arguments: SchedulerKind.dateSchedulers)
        func subMillisecondPeriod(kind: SchedulerKind) async throws {
            try await Harness.with(kind) { harness in
                let log = Recorder<Int>(harness)
                let disposable = harness.dateScheduler.schedule(after: .zero, repeatingEvery: .microseconds(250)) {
                    log.append(1)
                }
                #expect(await log.wait(for: 20), "a 250 µs periodic timer ticked \(log.count) times")
                disposable.dispose()
            }
        }
    }

    @Suite("6. Recursion")
    struct Recursion {
        @Test("scheduleRecursive runs again on each reschedule until disposed", arguments: SchedulerKind.allCases)
        func recursion(kind: SchedulerKind) async throws {
            try await Harness.with(kind) { harness in
                let log = Recorder<Int>(harness)
                let count = Atomic<Int>(0)
                let slot = DisposableSlot()
                let disposable = harness.scheduler.scheduleRecursive { reschedule in
                    let run = count.add(1, ordering: .relaxed).newValue
                    log.append(run)
                    if run < 100 { reschedule() } else { slot.value?.dispose() }
                }
                slot.value = disposable
                #expect(await log.wait(for: 100))
                #expect(log.all == Array(1...100))
                disposable.dispose()  // the slot holds the recursion, whose action holds the slot
            }
        }

        @Test("Disposing a recursion stops it", arguments: SchedulerKind.deferred)
        func disposingStops(kind: SchedulerKind) async throws {
            try await Harness.with(kind) { harness in
                let log = Recorder<Int>(harness)
                let count = Atomic<Int>(0)
                let slot = DisposableSlot()
                let handedOver = DispatchSemaphore(value: 0)
                slot.value = harness.scheduler.scheduleRecursive { reschedule in
                    let run = count.add(1, ordering: .relaxed).newValue
                    if run == 1 && !kind.runsOnTestThread { handedOver.wait() }
                    log.append(run)
                    if run == 10 { slot.value?.dispose() }
                    reschedule()
                }
                handedOver.signal()
                #expect(await log.wait(for: 10))
                await harness.letTimePass(.milliseconds(30))
                #expect(log.count == 10)
            }
        }

        @Test("The immediate scheduler trampolines a million reschedules on a constant stack")
        func immediateTrampolines() {
            // Depth, not stack addresses: the address sanitizer moves locals to fake stacks.
            let count = Atomic<Int>(0)
            let depth = Atomic<Int>(0)
            let deepest = Atomic<Int>(0)
            let recursion = Schedulers.immediate.scheduleRecursive { reschedule in
                let current = depth.add(1, ordering: .relaxed).newValue
                if current > deepest.load(ordering: .relaxed) { deepest.store(current, ordering: .relaxed) }
                if count.add(1, ordering: .relaxed).newValue < 1_000_000 { reschedule() }
                depth.subtract(1, ordering: .relaxed)
            }
            recursion.dispose()
            let runs = count.load(ordering: .relaxed)
            let maximumDepth = deepest.load(ordering: .relaxed)
            #expect(runs == 1_000_000)
            #expect(maximumDepth == 1, "reschedule() ran the action nested \(maximumDepth) deep instead of looping")
        }
    }
}
