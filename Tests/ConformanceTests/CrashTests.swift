import Foundation
import LoopScheduling
import Scheduling
import LoopSchedulingTestSupport
import Testing

/// Programmer errors stop the program with a message naming the method, the parameter and the
/// value (Docs/Design.md §4.9). Each runs in a child process.
@Suite("Crash tests", .serialized)
struct CrashTests {
    static func expectMessage(_ result: ExitTest.Result?, contains text: String) {
        guard let result else { return }
        let output = String(decoding: result.standardErrorContent, as: UTF8.self)
        #expect(output.contains(text), "stderr did not say \"\(text)\":\n\(output)")
    }

    @Test("A zero period stops the program (QueueScheduler)")
    func zeroPeriodQueue() async {
        let result = await ExitTests.serially {
            await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                startWatchdog()
                QueueScheduler().schedule(after: .zero, repeatingEvery: .zero, leeway: .zero) {}
            }
        }
        Self.expectMessage(
            result,
            contains:
                "QueueScheduler.schedule(after:repeatingEvery:leeway:): repeatingEvery must be positive (got 0.0 seconds)"
        )
    }

    @Test("A negative period stops the program (ConcurrentQueueScheduler)")
    func negativePeriodConcurrent() async {
        let result = await ExitTests.serially {
            await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                startWatchdog()
                ConcurrentQueueScheduler().schedule(after: .zero, repeatingEvery: .seconds(-1), leeway: .zero) {}
            }
        }
        Self.expectMessage(
            result,
            contains:
                "ConcurrentQueueScheduler.schedule(after:repeatingEvery:leeway:): repeatingEvery must be positive (got -1.0 seconds)"
        )
    }

    @Test("A negative leeway stops the program (TestScheduler)")
    func negativeLeewayTest() async {
        let result = await ExitTests.serially {
            await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                startWatchdog()
                TestScheduler().schedule(after: .zero, repeatingEvery: .seconds(1), leeway: .milliseconds(-1)) {}
            }
        }
        Self.expectMessage(
            result,
            contains:
                "TestScheduler.schedule(after:repeatingEvery:leeway:): leeway must not be negative (got -0.001 seconds)"
        )
    }

    @Test("A zero period stops the program (LoopScheduler)")
    func zeroPeriodLoop() async {
        let result = await ExitTests.serially {
            await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                startWatchdog()
                let loop = try! LoopScheduler(name: "crash")
                loop.schedule(after: .zero, repeatingEvery: .zero, leeway: .zero) {}
            }
        }
        Self.expectMessage(
            result,
            contains:
                "LoopScheduler.schedule(after:repeatingEvery:leeway:): repeatingEvery must be positive (got 0.0 seconds)"
        )
    }

    @Test("A NaN date stops the program (LoopScheduler.schedule(at:))")
    func nanDateLoop() async {
        let result = await ExitTests.serially {
            await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                startWatchdog()
                let loop = try! LoopScheduler(name: "crash")
                loop.schedule(at: Date(timeIntervalSinceReferenceDate: .nan)) {}
            }
        }
        Self.expectMessage(result, contains: "LoopScheduler.schedule(at:): at must be a finite date (got nan)")
    }

    @Test("An infinite date stops the program (QueueScheduler.schedule(at:repeatingEvery:leeway:))")
    func infiniteDateQueuePeriodic() async {
        let result = await ExitTests.serially {
            await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                startWatchdog()
                QueueScheduler().schedule(at: Date(timeIntervalSinceReferenceDate: .infinity), repeatingEvery: .seconds(1))
                {}
            }
        }
        Self.expectMessage(
            result,
            contains: "QueueScheduler.schedule(at:repeatingEvery:leeway:): at must be a finite date (got inf)"
        )
    }

    @Test("A bad period of a handler timer stops the program (TestScheduler, handler:)")
    func negativePeriodHandler() async {
        let result = await ExitTests.serially {
            await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                startWatchdog()
                let scheduler = TestScheduler()
                scheduler.schedule(after: .zero, repeatingEvery: .seconds(-1), leeway: .zero, handler: NoHandler())
            }
        }
        Self.expectMessage(
            result,
            contains:
                "TestScheduler.schedule(after:repeatingEvery:leeway:handler:): repeatingEvery must be positive (got -1.0 seconds)"
        )
    }

    @Test("A negative leeway stops the program (LoopScheduler, countingMissedTicks:)")
    func negativeLeewayCountingMissedTicks() async {
        let result = await ExitTests.serially {
            await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                startWatchdog()
                let loop = try! LoopScheduler(name: "crash")
                loop.schedule(
                    after: .zero,
                    repeatingEvery: .seconds(1),
                    leeway: .milliseconds(-1),
                    countingMissedTicks: { _ in }
                )
            }
        }
        Self.expectMessage(
            result,
            contains:
                "LoopScheduler.schedule(after:repeatingEvery:leeway:countingMissedTicks:): leeway must not be negative (got -0.001 seconds)"
        )
    }

    @Test("A zero tick period stops the program, naming its label (TestScheduler.ticks(every:leeway:))")
    func zeroTickPeriod() async {
        let result = await ExitTests.serially {
            await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                startWatchdog()
                _ = TestScheduler().ticks(every: .zero)
            }
        }
        Self.expectMessage(
            result,
            contains: "TestScheduler.ticks(every:leeway:): every must be positive (got 0.0 seconds)"
        )
    }

    @Test("A NaN date stops the program (TestScheduler.advance(to:))")
    func nanAdvance() async {
        let result = await ExitTests.serially {
            await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                startWatchdog()
                TestScheduler().advance(to: Date(timeIntervalSinceReferenceDate: -.infinity))
            }
        }
        Self.expectMessage(result, contains: "TestScheduler.advance(to:): to must be a finite date (got -inf)")
    }

    @Test("A NaN date stops the program (ImmediateScheduler and SubscriptionScheduler)")
    func nanDateImmediateAndSubscription() async {
        let immediate = await ExitTests.serially {
            await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                startWatchdog()
                Schedulers.immediate.schedule(at: Date(timeIntervalSinceReferenceDate: .nan)) {}
            }
        }
        Self.expectMessage(immediate, contains: "ImmediateScheduler.schedule(at:): at must be a finite date (got nan)")
        let subscription = await ExitTests.serially {
            await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                startWatchdog()
                SubscriptionScheduler().schedule(at: Date(timeIntervalSinceReferenceDate: .nan)) {}
            }
        }
        Self.expectMessage(
            subscription,
            contains: "SubscriptionScheduler.schedule(at:): at must be a finite date (got nan)"
        )
    }

    @Test("run() stops the program when it cannot settle")
    func runWithoutSettling() async {
        let result = await ExitTests.serially {
            await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                startWatchdog()
                let scheduler = TestScheduler()
                scheduler.scheduleRecursive { reschedule in reschedule() }
                scheduler.run()
            }
        }
        Self.expectMessage(result, contains: "TestScheduler.run(): ran 1000000 actions without settling")
    }

    @Test("A group of zero loops stops the program")
    func emptyGroup() async {
        let result = await ExitTests.serially {
            await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                startWatchdog()
                _ = try! LoopSchedulerGroup(count: 0)
            }
        }
        Self.expectMessage(result, contains: "LoopSchedulerGroup.init(count:name:): count must be positive (got 0)")
    }
}

/// A handler for the crash tests, which stop before any timer could fire.
private struct NoHandler: SchedulerTimerHandler {
    func timerFired() {}
}
