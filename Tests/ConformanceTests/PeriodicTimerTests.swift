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
            // Each tick outlasts several intervals: a scheduler that queued the next tick before
            // this one returned would run them side by side on a concurrent queue.
            let disposable = harness.dateScheduler.schedule(after: .zero, repeatingEvery: .milliseconds(1)) {
                if running.add(1, ordering: .acquiringAndReleasing).newValue > 1 {
                    overlaps.add(1, ordering: .relaxed)
                }
                if !kind.isVirtual {
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
        "Leeway coalesces, never postpones: a 10 ms period with 50 ms leeway ticks about 50 times in 500 ms",
        arguments: SchedulerKind.dateSchedulers
    )
    func leewayDoesNotPostpone(kind: SchedulerKind) async throws {
        try await Harness.with(kind) { harness in
            let log = Recorder<Int>(harness)
            let disposable = harness.dateScheduler.schedule(
                after: .milliseconds(10),
                repeatingEvery: .milliseconds(10),
                leeway: .milliseconds(50)
            ) {
                log.append(1)
            }
            await harness.letTimePass(.milliseconds(500))
            disposable.dispose()
            // Postponed by its leeway, it would tick every 60 ms: 8 times. Generous for a busy machine.
            #expect(log.count >= 30, "a lone periodic timer was postponed by its leeway: \(log.count) ticks")
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
        arguments: SchedulerKind.dateSchedulers
    )
    func pastDateKeepsItsGrid(kind: SchedulerKind) async throws {
        try await Harness.with(kind) { harness in
            struct Tick { var monotonic: Int64, wall: Int64 }
            let log = Recorder<Tick>(harness)
            let interval: Int64 = 400_000_000
            // 2.5 intervals ago: tick 0 (for grid point 2) runs at once, tick 1 at grid point 3,
            // half an interval from now, not a whole interval after tick 0.
            let date = harness.dateScheduler.now.addingTimeInterval(-1.0)
            let disposable = harness.dateScheduler.schedule(at: date, repeatingEvery: .milliseconds(400)) {
                log.append(Tick(monotonic: harness.monotonicNow(), wall: harness.wallNow()))
            }
            #expect(await log.wait(for: 2))
            disposable.dispose()
            let ticks = log.all
            let gridPoint3 = harness.due(date) + 3 * interval
            #expect(ticks[1].wall >= gridPoint3, "tick 1 started before grid point 3 of its date")
            let gap = ticks[1].monotonic - ticks[0].monotonic
            #expect(gap < interval * 3 / 4, "tick 1 came \(gap) ns after tick 0: off its date's grid")
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
                if !kind.isVirtual { ready.wait() }
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
