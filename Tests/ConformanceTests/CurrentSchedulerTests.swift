import Dispatch
import Foundation
import LoopSchedulingTestSupport
import Scheduling
import Synchronization
import Testing

extension Conformance {
    @Suite("2. Current scheduler")
    struct CurrentScheduler {
        /// Whether `Schedulers.current` is what the contract says for an action of `harness`.
        static func currentIsExpected(_ harness: Harness) -> Bool {
            Schedulers.current === harness.expectedCurrent
        }

        @Test("A task runs with its scheduler current", arguments: SchedulerKind.deferred)
        func currentDuringTask(kind: SchedulerKind) async throws {
            try await Harness.with(kind) { harness in
                let log = Recorder<Bool>(harness)
                harness.scheduler.schedule { log.append(Self.currentIsExpected(harness)) }
                #expect(await log.wait(for: 1))
                #expect(log.all == [true])
            }
        }

        @Test(
            "Timers, wall-clock timers and periodic ticks run with their scheduler current",
            arguments: SchedulerKind.realTime(SchedulerKind.dateSchedulers)
        )
        func currentDuringTimers(kind: SchedulerKind) async throws {
            try await Harness.with(kind) { harness in
                let log = Recorder<String>(harness)
                let scheduler = harness.dateScheduler
                scheduler.schedule(after: .milliseconds(1)) { log.append("after \(Self.currentIsExpected(harness))") }
                scheduler.schedule(at: scheduler.now) { log.append("at \(Self.currentIsExpected(harness))") }
                let periodic = scheduler.schedule(after: .zero, repeatingEvery: .milliseconds(2)) {
                    log.append("tick \(Self.currentIsExpected(harness))")
                }
                #expect(await log.wait(for: 4))
                periodic.dispose()
                #expect(log.all.allSatisfy { $0.hasSuffix("true") }, "\(log.all)")
            }
        }

        @Test("The immediate scheduler leaves the current scheduler alone")
        func immediateDoesNotChangeCurrent() {
            let outer = TestScheduler()
            let seen = LockedValue<[ObjectIdentifier?]>([])
            outer.performAsCurrent {
                Schedulers.immediate.schedule {
                    seen.withLock { $0.append(Schedulers.current.map(ObjectIdentifier.init)) }
                }
            }
            Schedulers.immediate.schedule { seen.withLock { $0.append(Schedulers.current.map(ObjectIdentifier.init)) } }
            let onThisThread = Schedulers.current.map(ObjectIdentifier.init)
            #expect(seen.withLock { $0 } == [ObjectIdentifier(outer), onThisThread])
        }

        @Test("Nesting restores the previous current scheduler", arguments: SchedulerKind.deferred)
        func nestingRestores(kind: SchedulerKind) async throws {
            try await Harness.with(kind) { harness in
                let other = TestScheduler()
                let log = Recorder<Bool>(harness)
                harness.scheduler.schedule {
                    let before = Self.currentIsExpected(harness)
                    let inside = other.performAsCurrent { Schedulers.current === other }
                    let after = Self.currentIsExpected(harness)
                    log.append(before && inside && after)
                }
                #expect(await log.wait(for: 1))
                #expect(log.all == [true])
            }
        }

        @Test("Outside any action the current scheduler is nil (off the main thread and queue)")
        func nilOutsideActions() async {
            let isNil = await onOwnThread { Schedulers.current == nil }
            #expect(isNil)
        }

        @Test(
            "The current scheduler is back to nil after an action, on the thread that ran it",
            arguments: SchedulerKind.loops
        )
        func restoredAfterAction(kind: SchedulerKind) async throws {
            try await Harness.with(kind) { harness in
                let log = Recorder<Bool>(harness)
                let scheduler = harness.dateScheduler
                // A timer runs after the batch that ran the task: the value must have been restored
                // in between and set again.
                scheduler.schedule {
                    log.append(Self.currentIsExpected(harness))
                    scheduler.schedule(after: .milliseconds(1)) { log.append(Self.currentIsExpected(harness)) }
                }
                #expect(await log.wait(for: 2))
                #expect(log.all == [true, true])
            }
        }

        @Test("On the main queue the current scheduler is Schedulers.main")
        func mainQueueFallback() async {
            let onMainQueue = await withCheckedContinuation { continuation in
                DispatchQueue.main.async { continuation.resume(returning: Schedulers.current === Schedulers.main) }
            }
            #expect(onMainQueue)
            let onMainScheduler = await withCheckedContinuation { continuation in
                Schedulers.main.schedule { continuation.resume(returning: Schedulers.main.isCurrent) }
            }
            #expect(onMainScheduler)
        }
    }
}
