import Foundation
import Scheduling
import Synchronization
import Testing

extension Conformance {
    @Suite("9. Bad input")
    struct BadInput {
        @Test(
            "Huge delays and dates neither trap nor fire, and stay cancellable",
            arguments: SchedulerKind.dateSchedulers
        )
        func hugeValuesStayPending(kind: SchedulerKind) async throws {
            try await Harness.with(kind) { harness in
                let fired = Atomic<Int>(0)
                let scheduler = harness.dateScheduler
                var tracked: Tracked? = Tracked()
                let weak = WeakBox(tracked!)
                let disposables = [
                    scheduler.schedule(after: .seconds(Int64.max)) { [tracked] in
                        _ = tracked
                        fired.add(1, ordering: .relaxed)
                    },
                    scheduler.schedule(at: .distantFuture) { fired.add(1, ordering: .relaxed) },
                    scheduler.schedule(at: Date(timeIntervalSince1970: 1e300)) { fired.add(1, ordering: .relaxed) },
                    scheduler.schedule(after: .seconds(Int64.max), repeatingEvery: .seconds(Int64.max)) {
                        fired.add(1, ordering: .relaxed)
                    },
                    scheduler.schedule(at: .distantFuture, repeatingEvery: .seconds(1)) {
                        fired.add(1, ordering: .relaxed)
                    },
                ]
                tracked = nil
                await harness.letTimePass(.milliseconds(30))
                let firedValue = fired.load(ordering: .relaxed)
                #expect(firedValue == 0)
                for disposable in disposables { disposable.dispose() }
                #expect(disposables.allSatisfy { $0.isDisposed })
                #expect(await harness.eventually { weak.isNil })
            }
        }

        /// Valid durations past `Int64` seconds, where `Duration.components` traps.
        static let beyondInt64Seconds: [Duration] = [
            Duration(secondsComponent: .max, attosecondsComponent: .max),
            .seconds(Int64.max) * 2,
        ]

        @Test(
            "Durations past Int64 seconds in after:, repeatingEvery: and leeway: saturate: pending until disposed",
            arguments: SchedulerKind.dateSchedulers,
            beyondInt64Seconds
        )
        func durationsBeyondInt64Seconds(kind: SchedulerKind, huge: Duration) async throws {
            try await Harness.with(kind) { harness in
                let fired = Atomic<Int>(0)
                let scheduler = harness.dateScheduler
                let weak: WeakBox
                let disposables: [any Disposable]
                do {
                    // Only the scheduled closures hold `tracked` after this block.
                    let tracked = Tracked()
                    weak = WeakBox(tracked)
                    func count() -> @Sendable () -> Void {
                        { [tracked] in
                            _ = tracked
                            fired.add(1, ordering: .relaxed)
                        }
                    }
                    disposables = [
                        scheduler.schedule(after: huge, count()),
                        scheduler.schedule(after: huge, repeatingEvery: huge, leeway: huge, count()),
                        scheduler.schedule(after: huge, repeatingEvery: .milliseconds(1), leeway: huge, count()),
                        scheduler.schedule(after: huge, repeatingEvery: huge, leeway: .zero, count()),
                        scheduler.schedule(at: .distantFuture, repeatingEvery: huge, leeway: huge, count()),
                    ]
                }
                await harness.letTimePass(.milliseconds(30))
                let firedValue = fired.load(ordering: .relaxed)
                #expect(firedValue == 0)
                #expect(disposables.allSatisfy { !$0.isDisposed }, "a saturated timer must stay pending")
                #expect(!weak.isNil, "a pending timer holds its closure")
                for disposable in disposables { disposable.dispose() }
                #expect(disposables.allSatisfy { $0.isDisposed })
                #expect(await harness.eventually { weak.isNil })
            }
        }

        @Test(
            "Their negatives in after: mean now",
            arguments: SchedulerKind.dateSchedulers,
            beyondInt64Seconds
        )
        func negativeDurationsBeyondInt64Seconds(kind: SchedulerKind, huge: Duration) async throws {
            try await Harness.with(kind) { harness in
                let log = Recorder<String>(harness)
                harness.dateScheduler.schedule(after: .zero - huge) { log.append("once") }
                let periodic = harness.dateScheduler.schedule(after: .zero - huge, repeatingEvery: huge) {
                    log.append("tick")
                }
                #expect(await log.wait(for: 2))
                periodic.dispose()
                #expect(Set(log.all) == ["once", "tick"])
            }
        }

        @Test("A huge periodic interval ticks once and then stays pending", arguments: SchedulerKind.dateSchedulers)
        func hugeInterval(kind: SchedulerKind) async throws {
            try await Harness.with(kind) { harness in
                let log = Recorder<Int>(harness)
                let disposable = harness.dateScheduler.schedule(after: .zero, repeatingEvery: .seconds(Int64.max)) {
                    log.append(1)
                }
                #expect(await log.wait(for: 1))
                await harness.letTimePass(.milliseconds(20))
                #expect(log.count == 1)
                disposable.dispose()
            }
        }
    }
}
