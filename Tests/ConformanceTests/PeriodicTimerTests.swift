import Dispatch
import Foundation
import Scheduling
import Synchronization
import Testing

extension Conformance.Periodic {
    @Test("A periodic timer's ticks never overlap each other", arguments: SchedulerKind.dateSchedulers)
    func ticksNeverOverlap(kind: SchedulerKind) async throws {
        try await Harness.with(kind) { harness in
            let log = Recorder<Int>(harness)
            let running = Atomic<Int>(0)
            let overlaps = Atomic<Int>(0)
            // Each of the first six ticks outlasts several intervals: a scheduler that queued the next
            // tick before this one returned would run them side by side on a concurrent queue. Only
            // those six spin: a busy tick after them, until this task disposes the timer, would keep a
            // scheduler's thread busy for as long as this task waits for a thread.
            let disposable = harness.dateScheduler.schedule(after: .zero, repeatingEvery: .milliseconds(1)) {
                if running.add(1, ordering: .acquiringAndReleasing).newValue > 1 {
                    overlaps.add(1, ordering: .relaxed)
                }
                if !kind.isVirtual && log.count < 6 {
                    let until = Nanoseconds.monotonicNow() + 4_000_000
                    while Nanoseconds.monotonicNow() < until {}
                }
                running.subtract(1, ordering: .acquiringAndReleasing)
                log.append(1)
            }
            #expect(await log.wait(for: 6))
            disposable.dispose()
            let overlapsValue = overlaps.load(ordering: .relaxed)
            #expect(overlapsValue == 0, "ticks of one periodic timer overlapped")
        }
    }

    @Test(
        "Leeway coalesces, never postpones: a lone 10 ms periodic timer with an hour of leeway ticks every period",
        arguments: SchedulerKind.dateSchedulers
    )
    func leewayDoesNotPostpone(kind: SchedulerKind) async throws {
        try await Harness.with(kind) { harness in
            // A leeway longer than the test can run: postponed by it, the timer would not tick again
            // before the wait ran out; coalescing alone (nothing to merge with) leaves it on its grid.
            let log = Recorder<Int64>(harness)
            let start = harness.monotonicNow()
            let disposable = harness.dateScheduler.schedule(
                after: .milliseconds(10),
                repeatingEvery: .milliseconds(10),
                leeway: .seconds(3600)
            ) {
                log.append(harness.monotonicNow())
            }
            #expect(await log.wait(for: 5), "a lone periodic timer was postponed by its leeway: \(log.count) ticks")
            disposable.dispose()
            for (index, tick) in log.all.enumerated() {
                #expect(tick >= start + Int64(index + 1) * 10_000_000, "tick \(index) came before its grid point")
            }
        }
    }

    @Test(
        "A leeway'd periodic timer never holds back a timer due before its own wake-up: nothing due is lost",
        arguments: SchedulerKind.dateSchedulers, [Duration.seconds(3600), .seconds(Int64.max)]
    )
    func leewayNeverHoldsBackADueTimer(kind: SchedulerKind, far: Duration) async throws {
        try await Harness.with(kind) { harness in
            // The periodic timer may share the far timer's wake-up (it is within its leeway). Once it
            // is due, a zero-delay action must still run at once: an arming planned for the first two
            // never serves a third that is due earlier. (Issue 26: lost on the Dispatch timer queue.)
            let scheduler = harness.dateScheduler
            let farTimer = scheduler.schedule(after: far) {}
            let ticks = Recorder<Int>(harness)
            let periodic = scheduler.schedule(
                after: .milliseconds(1),
                repeatingEvery: .seconds(3600),
                leeway: .seconds(7200)
            ) { ticks.append(1) }
            // A pause on the scheduler's clock, not a timer of its own (a lost sentinel would hide it).
            if let test = harness.testScheduler {
                test.advance(by: .milliseconds(5))
            } else {
                try await Task.sleep(for: .milliseconds(5))
            }
            let log = Recorder<Int>(harness)
            scheduler.schedule(after: .zero) { log.append(1) }
            #expect(await log.wait(for: 1, timeout: .seconds(10)), "the zero-delay action never ran")
            #expect(await ticks.wait(for: 1, timeout: .seconds(10)), "the due periodic timer never ticked")
            periodic.dispose()
            farTimer.dispose()
        }
    }

    @Test(
        "A saturated leeway still ticks",
        arguments: SchedulerKind.dateSchedulers,
        [Duration.seconds(Int64.max), Duration(secondsComponent: .max, attosecondsComponent: .max)]
    )
    func saturatedLeewayTicks(kind: SchedulerKind, leeway: Duration) async throws {
        try await Harness.with(kind) { harness in
            let log = Recorder<Int>(harness)
            let disposable = harness.dateScheduler.schedule(
                after: .milliseconds(1),
                repeatingEvery: .milliseconds(5),
                leeway: leeway
            ) {
                log.append(1)
            }
            #expect(await log.wait(for: 3), "a periodic timer with leeway \(leeway) ticked \(log.count) times")
            disposable.dispose()
        }
    }

    @Test(
        "An at: periodic timer's first tick follows the wall clock, the next ones the grid of its date",
        arguments: SchedulerKind.realTime(SchedulerKind.dateSchedulers)
    )
    func pastDateKeepsItsGrid(kind: SchedulerKind) async throws {
        try await Harness.with(kind) { harness in
            // An hour's interval, with grid point 3 of the date two seconds from now: tick 0 (for grid
            // point 2, an hour ago) runs at once, tick 1 at grid point 3. Timed from tick 0 instead,
            // tick 1 would come an hour later, long after the wait ran out. Should tick 0 itself end
            // only after grid point 3 (a machine stalled for two seconds), tick 1 is rightly an hour
            // out: that try shows nothing, and a new timer tries again.
            let interval: Int64 = 3_600_000_000_000
            for _ in 0..<3 {
                let log = Recorder<Int64>(harness)
                let ended = LockedValue<[Int64]>([])
                let date = harness.dateScheduler.now.addingTimeInterval(2 - 3 * 3600)
                let gridPoint3 = harness.due(date) + 3 * interval
                let disposable = harness.dateScheduler.schedule(at: date, repeatingEvery: .seconds(3600)) {
                    log.append(harness.wallNow())
                    ended.withLock { $0.append(harness.wallNow()) }
                }
                try #require(await harness.eventually { ended.withLock { !$0.isEmpty } }, "tick 0 did not run")
                guard try #require(ended.withLock { $0.first }) < gridPoint3 else {
                    disposable.dispose()
                    continue
                }
                try #require(await log.wait(for: 2), "tick 1 did not come at grid point 3 of its date")
                disposable.dispose()
                #expect(log.all[1] >= gridPoint3, "tick 1 started before grid point 3 of its date")
                return
            }
            Issue.record("tick 0 ended after grid point 3 of its date, two seconds after it was scheduled, in 3 tries")
        }
    }

    @Test(
        "Disposing from inside a tick releases the closure once the tick returns",
        arguments: SchedulerKind.dateSchedulers
    )
    func disposeInsideTickReleases(kind: SchedulerKind) async throws {
        try await Harness.with(kind) { harness in
            let log = Recorder<Int>(harness)
            let slot = DisposableSlot()
            var tracked: Tracked? = Tracked()
            let weak = WeakBox(tracked!)
            // The first tick may start before `schedule` returned: it waits until the slot is set.
            let ready = DispatchSemaphore(value: 0)
            slot.value = harness.dateScheduler.schedule(after: .zero, repeatingEvery: .milliseconds(2)) { [tracked] in
                _ = tracked
                if !kind.runsOnTestThread { ready.wait() }
                slot.value?.dispose()
                log.append(1)
            }
            ready.signal()
            tracked = nil
            #expect(await log.wait(for: 1))
            #expect(await harness.eventually { weak.isNil }, "a periodic timer disposed inside its tick kept its closure")
            await harness.letTimePass(.milliseconds(20))
            #expect(log.count == 1)
        }
    }
}
