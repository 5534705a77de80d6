import Foundation
import Scheduling
import Synchronization
import LoopSchedulingTestSupport
import Testing

@Suite("TestScheduler (rule 8)")
struct TestSchedulerTests {
    @Test("Nothing runs until time is advanced")
    func nothingRunsUntilAdvanced() {
        let scheduler = TestScheduler()
        let ran = LockedValue(false)
        scheduler.schedule { ran.withLock { $0 = true } }
        #expect(!ran.withLock { $0 })
        #expect(scheduler.pendingCount == 1)
        scheduler.advance()
        #expect(ran.withLock { $0 })
        #expect(scheduler.pendingCount == 0)
    }

    @Test("Actions run in (due time, scheduling order), with now at each due time")
    func orderAndNow() {
        let start = Date(timeIntervalSinceReferenceDate: 0)
        let scheduler = TestScheduler(now: start)
        let log = LockedValue<[(String, TimeInterval)]>([])
        func record(_ name: String) -> @Sendable () -> Void {
            { log.withLock { $0.append((name, scheduler.now.timeIntervalSince(start))) } }
        }
        scheduler.schedule(after: .seconds(2), record("b"))
        scheduler.schedule(after: .seconds(1), record("a"))
        scheduler.schedule(after: .seconds(2), record("c"))
        scheduler.schedule(record("now"))
        scheduler.advance(by: .seconds(1))
        #expect(log.withLock { $0.map(\.0) } == ["now", "a"])
        scheduler.advance(by: .seconds(5))
        #expect(log.withLock { $0.map(\.0) } == ["now", "a", "b", "c"])
        #expect(log.withLock { $0.map(\.1) } == [0, 1, 2, 2])
        #expect(scheduler.now == start.addingTimeInterval(6))
    }

    @Test("now never moves backwards: a past date runs at the current now")
    func pastDateRunsNow() {
        let scheduler = TestScheduler(now: Date(timeIntervalSinceReferenceDate: 100))
        let ranAt = LockedValue<Date?>(nil)
        scheduler.schedule(at: Date(timeIntervalSinceReferenceDate: 50)) { ranAt.withLock { $0 = scheduler.now } }
        scheduler.advance(to: Date(timeIntervalSinceReferenceDate: 10))
        #expect(ranAt.withLock { $0 } == Date(timeIntervalSinceReferenceDate: 100))
        #expect(scheduler.now == Date(timeIntervalSinceReferenceDate: 100))
    }

    @Test("step() runs the next action whatever its due time and reports when none is left")
    func step() {
        let scheduler = TestScheduler()
        let count = LockedValue(0)
        scheduler.schedule(after: .seconds(3600)) { count.withLock { $0 += 1 } }
        #expect(scheduler.step())
        #expect(count.withLock { $0 } == 1)
        #expect(scheduler.now == Date(timeIntervalSinceReferenceDate: 3600))
        #expect(!scheduler.step())
    }

    @Test("run() runs every one-shot action, far-future ones too, with periodic timers ticking along")
    func runSettles() {
        let scheduler = TestScheduler()
        let ticks = LockedValue(0)
        let done = LockedValue(false)
        let periodic = scheduler.schedule(after: .zero, repeatingEvery: .seconds(1)) { ticks.withLock { $0 += 1 } }
        scheduler.schedule(after: .seconds(10)) { done.withLock { $0 = true } }
        scheduler.run()
        #expect(done.withLock { $0 })
        // Ticks at 0…9 s. The tick due at 10 s was scheduled (when the 9 s tick ran) after the
        // one-shot, so the one-shot runs first at 10 s, and run() stops there.
        #expect(ticks.withLock { $0 } == 10)
        #expect(scheduler.now == Date(timeIntervalSinceReferenceDate: 10))
        #expect(scheduler.pendingCount == 1, "the periodic timer is still pending")
        periodic.dispose()
        #expect(scheduler.pendingCount == 0)
        scheduler.run()  // with only nothing pending, returns at once
    }

    @Test("Periodic ticks land exactly on the grid; leeway is accepted")
    func periodicGrid() {
        let scheduler = TestScheduler()
        let times = LockedValue<[Int64]>([])
        let periodic = scheduler.schedule(
            after: .milliseconds(5),
            repeatingEvery: .milliseconds(10),
            leeway: .milliseconds(1)
        ) {
            times.withLock { $0.append(scheduler.virtualNanoseconds) }
        }
        scheduler.advance(by: .milliseconds(45))
        periodic.dispose()  // its closure holds the scheduler, which holds the timer until disposed
        // Virtual time counts from 1970, like every other scheduler's clock.
        let start = Nanoseconds.sinceEpoch(Date(timeIntervalSinceReferenceDate: 0))
        #expect(times.withLock { $0 } == [5, 15, 25, 35, 45].map { start + Int64($0) * 1_000_000 })
    }

    @Test("A periodic timer starting at a past date keeps the grid of its date")
    func periodicPastStart() {
        let scheduler = TestScheduler(now: Date(timeIntervalSinceReferenceDate: 100))
        let times = LockedValue<[Int64]>([])
        let periodic = scheduler.schedule(at: Date(timeIntervalSinceReferenceDate: 97.5), repeatingEvery: .seconds(1)) {
            times.withLock { $0.append(scheduler.virtualNanoseconds) }
        }
        scheduler.advance(by: .seconds(2))
        periodic.dispose()
        // The first tick runs at once (now never moves backwards); the next ones on 100.5, 101.5.
        let epoch = Nanoseconds.sinceEpoch(Date(timeIntervalSinceReferenceDate: 0))
        #expect(times.withLock { $0 } == [100_000_000_000, 100_500_000_000, 101_500_000_000].map { epoch + $0 })
    }

    @Test("It is the current scheduler while it runs an action")
    func currentWhileRunning() {
        let scheduler = TestScheduler()
        let wasCurrent = LockedValue(false)
        scheduler.schedule { wasCurrent.withLock { $0 = scheduler.isCurrent } }
        scheduler.advance()
        #expect(wasCurrent.withLock { $0 })
        #expect(!scheduler.isCurrent)
    }

    @Test("Disposing removes the entry and releases its closure at once")
    func disposeRemoves() {
        let scheduler = TestScheduler()
        let disposable = scheduler.schedule(after: .seconds(1)) {}
        #expect(scheduler.pendingCount == 1)
        disposable.dispose()
        #expect(scheduler.pendingCount == 0)
        #expect(disposable.isDisposed)
    }

    @Test("Scheduling from many threads at once is safe")
    func threadSafe() async {
        let scheduler = TestScheduler()
        let count = LockedValue(0)
        // `concurrentPerform` blocks its caller until every worker is done: a thread made for it.
        await onOwnThread {
            DispatchQueue.concurrentPerform(iterations: 8) { _ in
                for _ in 0..<1000 { scheduler.schedule(after: .milliseconds(1)) { count.withLock { $0 += 1 } } }
            }
        }
        scheduler.advance(by: .milliseconds(1))
        #expect(count.withLock { $0 } == 8000)
    }
}
