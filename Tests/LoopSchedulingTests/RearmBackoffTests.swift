import Dispatch
import Foundation
import LoopSchedulingTestSupport
@_spi(SchedulerEngine) import Scheduling
import Synchronization
import Testing

@testable import LoopEngine
@testable import LoopScheduling

/// Rule 13's protocol never makes the loop wait for another thread (Docs/Design.md §4.13): a re-arm
/// from another thread is held, by the debug builds' `RearmWindow`, between writing its deadline and
/// publishing it — as a preempted thread would be — while the loop fires, re-arms and disposes that
/// very timer. The loop keeps running other tasks and timers meanwhile (the window stays open until
/// the test has seen them run), and the timer runs once, never before the last accepted deadline.
///
/// Time is the test's: the loop's monotonic clock is frozen and stepped, so "never before" is
/// checked on the clock reading the action sees, and nothing depends on how fast the machine is.
@Suite("Re-arm back-off: the loop never waits for a re-arming thread")
struct RearmBackoffTests {
    static let second: Int64 = 1_000_000_000

    /// A loop on a frozen clock, a timer `x` due at start + 1 s whose action records the clock
    /// reading it ran at, and another thread's `x.rearm(after: 5 s)` held in its window.
    final class Scenario: Sendable {
        let clock = SteppableClock()
        let loop: LoopScheduler
        let start: Int64
        let firings = LockedValue<[Int64]>([])
        let x: any RearmableTimer
        /// Released by the test to let the held re-arm end.
        let release = DispatchSemaphore(value: 0)
        let inWindow = Atomic<Bool>(false)
        /// Watches an object only x's closure holds: nil once the closure is released.
        let captured: WeakTracked

        init(name: String) throws {
            start = Nanoseconds.monotonicNow()
            clock.freezeMonotonic(at: start)
            loop = try LoopScheduler(name: name, clock: clock)
            let (clock, firings) = (clock, firings)
            let tracked = Tracked()
            captured = WeakTracked(tracked)
            x = loop.scheduleRearmable(after: .seconds(1)) { [tracked] in
                withExtendedLifetime(tracked) {}
                firings.withLock { $0.append(clock.monotonicNow()) }
            }
            loop.core.rearmWindow.set { [weak self] timer in
                guard let self, timer === self.x else { return }
                self.inWindow.store(true, ordering: .releasing)
                self.release.wait()  // the re-arming thread is the test's own (onOwnThread)
            }
        }

        /// Moves the loop's clock to `start + offset` and runs a zero-delay probe timer on the loop
        /// (it fires after every timer due by then: timers fire in deadline order). True once the
        /// probe ran; false if the loop did not get to it while the test looked (a stuck loop).
        func step(to offset: Int64) async -> Bool {
            clock.freezeMonotonic(at: start + offset)
            let ran = Atomic<Bool>(false)
            loop.schedule(after: .zero) { ran.store(true, ordering: .releasing) }
            return await eventually { ran.load(ordering: .acquiring) }
        }

        /// Runs `body` as a loop task and waits for it, or returns nil if the loop did not get to it.
        func onLoopOrNil<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T? {
            let result = LockedValue<T?>(nil)
            loop.schedule {
                let value = body()  // outside the lock: a loop stuck in `body` must not block the test
                result.withLock { $0 = value }
            }
            guard await eventually({ result.withLock { $0 != nil } }) else { return nil }
            return result.withLock { $0 }
        }

        /// Starts the re-arm from another thread, `x.rearm(after: 5 s)` on the clock as it stands,
        /// which the hook holds until ``release`` is signalled, and waits until it is held. Returns
        /// the re-arm's outcome to come and the deadline it asks for.
        func holdRearm() async -> (outcome: Task<Bool, Never>, deadline: Int64) {
            let (x, deadline) = (x, clock.monotonicNow() + 5 * RearmBackoffTests.second)
            let outcome = Task { await onOwnThread(name: "test.rearm") { x.rearm(after: .seconds(5)) } }
            #expect(await eventually { inWindow.load(ordering: .acquiring) })
            return (outcome, deadline)
        }

        /// Where x is and what state it is in, read on the loop: its store slot (a heap slot when
        /// ≥ 0) and its lifecycle state.
        func place() async -> (slot: Int, state: UInt8)? {
            let timer = x as! LoopTimer
            return await onLoopOrNil { (timer.heapIndex, timer.state.load(ordering: .acquiring)) }
        }

        /// Moves the clock just short of x's first deadline, so that x waits in the heap (due within
        /// the horizon) rather than in the wheel, whose bucket move would read a re-arm's deadline.
        func bringIntoHeap() async {
            #expect(await step(to: Self.secondMinusTick))
            #expect((await place())?.slot ?? -1 >= 0, "x is not in the heap")
        }

        static let secondMinusTick = RearmBackoffTests.second - 100_000
    }

    @Test("The loop fires other timers and runs tasks while a re-arm of a due timer is held, then fires it once, at the held re-arm's deadline")
    func fireAndRearmWhileHeld() async throws {
        let scenario = try Scenario(name: "backoff-fire")
        let loop = scenario.loop
        await shuttingDown(loop) {
            defer { scenario.release.signal() }  // on any path, so the held thread ends
            let otherFired = Atomic<Int>(0)
            loop.schedule(after: .milliseconds(1500)) { otherFired.add(1, ordering: .relaxed) }
            await scenario.bringIntoHeap()
            let (remote, deadline) = await scenario.holdRearm()

            // The window is open: x (due at +1 s) comes due; the loop leaves it to the re-arm and goes on.
            let progressed = await scenario.step(to: 2 * Self.second)
            #expect(progressed, "the loop stopped while another thread held a re-arm of a due timer")
            #expect(otherFired.load(ordering: .relaxed) == 1)
            #expect(scenario.firings.withLock { $0.isEmpty }, "x ran while its re-arm was held")
            #expect((await scenario.place())?.state == ActionLifecycle.rearmingRefile, "the loop did not meet x")
            // A re-arm on the loop meanwhile is accepted, and ordered before the held one.
            let onLoop = await scenario.onLoopOrNil { scenario.x.rearm(after: .seconds(1)) }
            #expect(onLoop == true)

            scenario.release.signal()
            #expect(await remote.value == true)
            // The last accepted deadline is the held re-arm's.
            #expect(await scenario.step(to: deadline - scenario.start - 1))
            #expect(scenario.firings.withLock { $0.isEmpty }, "x ran before its last accepted deadline")
            #expect(await scenario.step(to: deadline - scenario.start))
            #expect(await scenario.step(to: 10 * Self.second))
            let firings = scenario.firings.withLock { $0 }
            #expect(firings == [deadline], "x ran \(firings.count) times, or not at its deadline")
        }
    }

    @Test("A dispose on the loop while another thread's re-arm is held wins at once: the closure is released, the re-arm returns false, the timer never runs")
    func disposeWhileHeld() async throws {
        let scenario = try Scenario(name: "backoff-dispose")
        let loop = scenario.loop
        await shuttingDown(loop) {
            defer { scenario.release.signal() }
            await scenario.bringIntoHeap()
            let (remote, _) = await scenario.holdRearm()
            // Popped as due first, so the dispose meets a timer the loop left to the re-arm.
            #expect(await scenario.step(to: 2 * Self.second))
            #expect((await scenario.place())?.state == ActionLifecycle.rearmingRefile, "the loop did not meet x")
            let disposed = await scenario.onLoopOrNil { () -> Bool in
                scenario.x.dispose()
                return scenario.x.isDisposed
            }
            #expect(disposed == true, "the loop did not dispose while another thread held a re-arm")
            #expect(scenario.captured.isNil, "the dispose did not release the closure at once")
            scenario.release.signal()
            #expect(await remote.value == false, "a re-arm ordered after a dispose must be refused")
            #expect(await scenario.step(to: 10 * Self.second))
            #expect(scenario.firings.withLock { $0.isEmpty })
            #expect(await eventually { loop.statistics.timersPending == 0 })
        }
    }

    @Test("A re-arm held before the timer comes due: the loop re-arms it itself, fires others, and the timer runs once at the last accepted deadline")
    func ownerRearmWhileHeldBeforeDue() async throws {
        let scenario = try Scenario(name: "backoff-owner")
        let loop = scenario.loop
        await shuttingDown(loop) {
            defer { scenario.release.signal() }
            let otherFired = Atomic<Int>(0)
            loop.schedule(after: .seconds(2)) { otherFired.add(1, ordering: .relaxed) }
            let (remote, deadline) = await scenario.holdRearm()
            // Not due yet: the loop's own re-arm (to +0.5 s) is accepted, ordered before the held one.
            let onLoop = await scenario.onLoopOrNil { scenario.x.rearm(after: .milliseconds(500)) }
            #expect(onLoop == true, "the loop stopped while another thread held a re-arm")
            #expect((await scenario.place())?.state == ActionLifecycle.rearmingRefile)
            #expect(await scenario.step(to: 3 * Self.second), "the loop stopped while a re-arm was held")
            #expect(otherFired.load(ordering: .relaxed) == 1)
            #expect(scenario.firings.withLock { $0.isEmpty }, "x ran while its re-arm was held")
            scenario.release.signal()
            #expect(await remote.value == true)
            #expect(await scenario.step(to: deadline - scenario.start - 1))
            #expect(scenario.firings.withLock { $0.isEmpty }, "x ran before its last accepted deadline")
            #expect(await scenario.step(to: deadline - scenario.start))
            #expect(scenario.firings.withLock { $0 } == [deadline])
        }
    }
}
