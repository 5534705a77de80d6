import Foundation
import Scheduling
import Synchronization
import Testing

extension Conformance {
    @Suite("1. Cancellation")
    struct Cancellation {
        @Test("A timer disposed before it starts never starts", arguments: SchedulerKind.dateSchedulers)
        func disposedTimerNeverStarts(kind: SchedulerKind) async throws {
            try await Harness.with(kind) { harness in
                let ran = Atomic<Bool>(false)
                let disposable = harness.dateScheduler.schedule(after: .milliseconds(20)) {
                    ran.store(true, ordering: .relaxed)
                }
                disposable.dispose()
                #expect(disposable.isDisposed)
                await harness.letTimePass(.milliseconds(80))
                let ranValue = ran.load(ordering: .relaxed)
                #expect(!ranValue)
            }
        }

        @Test("A task disposed before it starts never starts", arguments: SchedulerKind.serial)
        func disposedTaskNeverStarts(kind: SchedulerKind) async throws {
            try await Harness.with(kind) { harness in
                let gate = DispatchSemaphore(value: 0)
                let log = Recorder<String>(harness)
                if !kind.runsOnTestThread {
                    // Hold the serial scheduler busy so the next task is certainly not started yet.
                    harness.scheduler.schedule { gate.wait() }
                }
                let victim = harness.scheduler.schedule { log.append("victim") }
                victim.dispose()
                gate.signal()
                harness.scheduler.schedule { log.append("sentinel") }
                #expect(await log.wait(for: 1))
                #expect(log.all == ["sentinel"])
            }
        }

        @Test("Disposing while the action runs does not interrupt it", arguments: SchedulerKind.deferred)
        func disposeWhileRunningDoesNotInterrupt(kind: SchedulerKind) async throws {
            try await Harness.with(kind) { harness in
                let slot = DisposableSlot()
                let handedOver = DispatchSemaphore(value: 0)
                let log = Recorder<String>(harness)
                slot.value = harness.scheduler.schedule {
                    if !kind.runsOnTestThread { handedOver.wait() }
                    log.append("started")
                    slot.value?.dispose()
                    log.append("finished")
                }
                handedOver.signal()
                #expect(await log.wait(for: 2))
                #expect(log.all == ["started", "finished"])
                #expect(slot.value?.isDisposed == true)
            }
        }

        @Test("dispose() is idempotent", arguments: SchedulerKind.allCases)
        func disposeIsIdempotent(kind: SchedulerKind) async throws {
            try await Harness.with(kind) { harness in
                let disposable = harness.scheduler.schedule {}
                disposable.dispose()
                disposable.dispose()
                #expect(disposable.isDisposed)
            }
        }

        @Test("Running an action does not dispose it", arguments: SchedulerKind.deferred)
        func runningDoesNotDispose(kind: SchedulerKind) async throws {
            try await Harness.with(kind) { harness in
                let log = Recorder<Int>(harness)
                let disposable = harness.scheduler.schedule { log.append(1) }
                #expect(await log.wait(for: 1))
                #expect(!disposable.isDisposed)
            }
        }

        @Test("The closure is released once the action ran", arguments: SchedulerKind.allCases)
        func closureReleasedAfterRun(kind: SchedulerKind) async throws {
            try await Harness.with(kind) { harness in
                let log = Recorder<Int>(harness)
                var tracked: Tracked? = Tracked()
                let weak = WeakBox(tracked!)
                let disposable = harness.scheduler.schedule { [tracked] in
                    _ = tracked
                    log.append(1)
                }
                tracked = nil
                #expect(await log.wait(for: 1))
                #expect(await harness.eventually { weak.isNil }, "the scheduler still holds the closure of an action that ran")
                _ = disposable
            }
        }

        @Test(
            "The closure is released at once when a pending timer is disposed",
            arguments: SchedulerKind.dateSchedulers
        )
        func closureReleasedOnDispose(kind: SchedulerKind) async throws {
            try await Harness.with(kind) { harness in
                var tracked: Tracked? = Tracked()
                let weak = WeakBox(tracked!)
                let disposable = harness.dateScheduler.schedule(after: .seconds(30)) { [tracked] in _ = tracked }
                tracked = nil
                #expect(!weak.isNil)
                disposable.dispose()
                #expect(weak.isNil, "disposing a pending timer must release its closure before dispose() returns")
            }
        }

        @Test("A disposed periodic timer releases its closure", arguments: SchedulerKind.dateSchedulers)
        func periodicClosureReleased(kind: SchedulerKind) async throws {
            try await Harness.with(kind) { harness in
                let log = Recorder<Int>(harness)
                var tracked: Tracked? = Tracked()
                let weak = WeakBox(tracked!)
                let disposable = harness.dateScheduler.schedule(after: .zero, repeatingEvery: .milliseconds(5)) {
                    [tracked] in
                    _ = tracked
                    log.append(1)
                }
                tracked = nil
                #expect(await log.wait(for: 2))
                disposable.dispose()
                #expect(await harness.eventually { weak.isNil }, "a disposed periodic timer still holds its closure")
            }
        }

        @Test("Dropping the disposable cancels nothing", arguments: SchedulerKind.dateSchedulers)
        func droppingDoesNotCancel(kind: SchedulerKind) async throws {
            try await Harness.with(kind) { harness in
                let log = Recorder<String>(harness)
                _ = harness.dateScheduler.schedule(after: .milliseconds(5)) { log.append("timer") }
                _ = harness.scheduler.schedule { log.append("task") }
                #expect(await log.wait(for: 2))
                #expect(Set(log.all) == ["timer", "task"])
            }
        }

        @Test(
            "Dropping a periodic timer's disposable does not stop it (ReactiveSwift#582)",
            arguments: SchedulerKind.dateSchedulers
        )
        func droppingPeriodicDoesNotStop(kind: SchedulerKind) async throws {
            try await Harness.with(kind) { harness in
                let log = Recorder<Int>(harness)
                let weak = WeakDisposable()
                do {
                    let disposable = harness.dateScheduler.schedule(after: .zero, repeatingEvery: .milliseconds(5)) {
                        log.append(1)
                    }
                    weak.value = disposable
                }
                #expect(await log.wait(for: 5), "the periodic timer stopped when its disposable was dropped")
                let stillHeld = try #require(weak.value, "the scheduler does not hold its periodic timer")
                stillHeld.dispose()
            }
        }

        @Test("Disposing from inside a periodic tick stops every later tick", arguments: SchedulerKind.dateSchedulers)
        func disposeFromInsideTick(kind: SchedulerKind) async throws {
            try await Harness.with(kind) { harness in
                let log = Recorder<Int>(harness)
                let slot = DisposableSlot()
                let count = Atomic<Int>(0)
                let ready = DispatchSemaphore(value: 0)
                slot.value = harness.dateScheduler.schedule(after: .milliseconds(1), repeatingEvery: .milliseconds(5)) {
                    let tick = count.add(1, ordering: .relaxed).newValue
                    if tick == 1 && !kind.runsOnTestThread { ready.wait() }
                    log.append(tick)
                    if tick == 3 { slot.value?.dispose() }
                }
                ready.signal()
                #expect(await log.wait(for: 3))
                await harness.letTimePass(.milliseconds(60))
                #expect(log.all == [1, 2, 3])
            }
        }
    }
}
