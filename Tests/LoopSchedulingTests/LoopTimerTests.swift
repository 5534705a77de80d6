import Dispatch
import Foundation
import Scheduling
import Synchronization
import LoopSchedulingTestSupport
import Testing

@testable import LoopEngine
@testable import LoopScheduling

@Suite("LoopScheduler timers")
struct LoopTimerTests {
    @Test("100 timers with the same deadline fire in scheduling order", arguments: TimerDriverKind.all)
    func sameDeadlineFIFO(driver: TimerDriverKind) async throws {
        let clock = SteppableClock()
        let loop = try LoopScheduler(name: "fifo", clock: clock, driver: driver)
        await shuttingDown(loop) {
            let order = LockedValue<[Int]>([])
            clock.freezeMonotonic(at: Nanoseconds.monotonicNow() + 20_000_000)
            for index in 0..<100 {
                loop.schedule(after: .zero) { order.withLock { $0.append(index) } }
            }
            clock.unfreeze()
            #expect(await eventually { order.withLock { $0.count } == 100 })
            #expect(order.withLock { $0 } == Array(0..<100))
        }
    }

    @Test("Never early for 0.2 ms, 999 µs, 1 ms and 10 ms, on both drivers", arguments: TimerDriverKind.all)
    func neverEarly(driver: TimerDriverKind) async throws {
        let loop = try LoopScheduler(name: "early", clock: SystemClock(), driver: driver)
        await shuttingDown(loop) {
            let delays: [Int64] = [200_000, 999_000, 1_000_000, 10_000_000]
            let early = LockedValue<[Int64]>([])
            let fired = Atomic<Int>(0)
            for round in 0..<20 {
                for delay in delays {
                    let start = Nanoseconds.monotonicNow()
                    loop.schedule(after: .nanoseconds(delay)) {
                        let elapsed = Nanoseconds.monotonicNow() - start
                        if elapsed < delay { early.withLock { $0.append(delay - elapsed) } }
                        fired.add(1, ordering: .relaxed)
                    }
                }
                if round % 5 == 0 { busyWaitOnLoop(loop, 3_000_000) }
            }
            #expect(await eventually { fired.load(ordering: .relaxed) == 80 })
            #expect(early.withLock { $0 }.isEmpty, "timers fired early by \(early.withLock { $0 }) ns")
        }
    }

    private func busyWaitOnLoop(_ loop: LoopScheduler, _ nanoseconds: Int64) {
        loop.schedule { busyWait(nanoseconds) }
    }

    @Test("A delay is measured from the call, also after a 200 ms blocking action", arguments: TimerDriverKind.all)
    func delayFromTheCall(driver: TimerDriverKind) async throws {
        let loop = try LoopScheduler(name: "stale", clock: SystemClock(), driver: driver)
        try await shuttingDown(loop) {
            let elapsed = LockedValue<Int64?>(nil)
            loop.schedule {
                busyWait(200_000_000)  // libuv's cached loop time is now 200 ms stale
                let start = Nanoseconds.monotonicNow()
                loop.schedule(after: .milliseconds(50)) {
                    elapsed.withLock { $0 = Nanoseconds.monotonicNow() - start }
                }
            }
            #expect(await eventually { elapsed.withLock { $0 } != nil })
            let measured = try #require(elapsed.withLock { $0 })
            #expect(measured >= 50_000_000, "fired \(50_000_000 - measured) ns early")
        }
    }

    @Test("An overdue periodic timer does not burst and reports the ticks it skipped")
    func overdueReportsMissedTicks() async throws {
        // On a clock the test steps, so "late" is exact: the loop sees only the readings it is given.
        let clock = SteppableClock()
        let origin = Nanoseconds.monotonicNow()
        clock.freezeMonotonic(at: origin)
        let loop = try LoopScheduler(name: "missed", clock: clock)
        await shuttingDown(loop) {
            let missed = LockedValue<[Int]>([])
            let disposable = loop.schedule(after: .zero, repeatingEvery: .milliseconds(10), leeway: .zero) { count in
                missed.withLock { $0.append(count) }
            }
            /// Sets the clock, wakes the loop to read it, and waits until `ticks` ticks ran in all.
            func step(to milliseconds: Int64, expecting ticks: Int) async {
                clock.freezeMonotonic(at: origin + milliseconds * 1_000_000)
                loop.schedule {}
                #expect(await eventually { missed.withLock { $0.count } >= ticks }, "at \(milliseconds) ms")
                _ = await onLoop(loop) { 0 }  // a burst would have run by the end of this round trip
                #expect(missed.withLock { $0.count } == ticks, "at \(milliseconds) ms: a burst of catch-up ticks")
            }
            await step(to: 0, expecting: 1)
            await step(to: 10, expecting: 2)
            // 55 ms late for grid point 2 (20 ms): the overdue tick runs once, no catch-up burst.
            await step(to: 75, expecting: 3)
            // The next tick is for the first grid point after that, 80 ms, and reports the points
            // that got no tick of their own: 30 to 70 ms.
            await step(to: 80, expecting: 4)
            await step(to: 90, expecting: 5)
            disposable.dispose()
            #expect(missed.withLock { $0 } == [0, 0, 0, 5, 0])
        }
    }

    @Test(
        "A zero-delay timer that re-arms itself does not starve a 50 ms timer: it fires once the clock reaches it, and the re-arming goes on",
        arguments: TimerDriverKind.all
    )
    func zeroDelayDoesNotStarve(driver: TimerDriverKind) async throws {
        // On a clock the re-arming timer itself steps, after 100 passes: the 50 ms timer is due only
        // from then on, however many passes this machine manages in a millisecond. The chain counts
        // its passes and ends itself 100 passes after the fire (or 1,000 after the step without
        // one): the loop never blocks while it runs, so its length must not depend on how soon this
        // task gets a thread to look.
        let clock = SteppableClock()
        let origin = Nanoseconds.monotonicNow()
        clock.freezeMonotonic(at: origin)
        let loop = try LoopScheduler(name: "starve", clock: clock, driver: driver)
        try await shuttingDown(loop) {
            struct Chain {
                var passes = 0
                var firedAtPass: Int?
                var firedBeforeStep = false
                var ended = false
            }
            let chain = LockedValue(Chain())
            let stepAt = 100
            @Sendable func rearm() {
                let goesOn = chain.withLock { chain -> Bool in
                    chain.passes += 1
                    if chain.passes == stepAt {
                        chain.firedBeforeStep = chain.firedAtPass != nil
                        clock.freezeMonotonic(at: origin + 50_000_000)
                    }
                    let limit = chain.firedAtPass.map { $0 + 100 } ?? stepAt + 1_000
                    chain.ended = chain.passes >= limit
                    return !chain.ended
                }
                if goesOn { loop.schedule(after: .zero) { rearm() } }
            }
            // Scheduled first: its deadline is read from the clock before the chain can step it.
            loop.schedule(after: .milliseconds(50)) { chain.withLock { $0.firedAtPass = $0.passes } }
            loop.schedule { rearm() }
            #expect(await eventually { chain.withLock { $0.ended } }, "the re-arming timer stopped re-arming")
            let result = chain.withLock { $0 }
            #expect(!result.firedBeforeStep, "the 50 ms timer fired before the clock reached it")
            let firedAt = try #require(result.firedAtPass, "the re-arming timer starved the 50 ms timer for 1,000 passes")
            #expect(result.passes == firedAt + 100, "the re-arming did not go on after the 50 ms timer fired")
        }
    }

    @Test("Huge delays neither spin the loop nor fire, and stay cancellable")
    func hugeDelaysDoNotSpin() async throws {
        let loop = try LoopScheduler(name: "huge")
        await shuttingDown(loop) {
            let fired = Atomic<Int>(0)
            let disposables = [
                loop.schedule(after: .seconds(Int64.max)) { fired.add(1, ordering: .relaxed) },
                loop.schedule(at: .distantFuture) { fired.add(1, ordering: .relaxed) },
                loop.schedule(after: .seconds(Int64.max), repeatingEvery: .seconds(1)) { fired.add(1, ordering: .relaxed) },
            ]
            _ = await onLoop(loop) { 0 }
            #expect(await eventually { loop.statistics.timersPending == 3 })
            // Settled first: the iteration that published the count may not have reached its
            // arming yet, and the remote queue's flush follows a look that took timers (10 ms). A
            // spinning loop never settles, and fails here.
            var last = loop.statistics.loopIterations
            var since = ContinuousClock.now
            let settled = await eventually {
                let now = loop.statistics.loopIterations
                if now != last { (last, since) = (now, ContinuousClock.now) }
                return ContinuousClock.now - since >= .milliseconds(50)
            }
            #expect(settled, "the loop kept iterating with only huge timers")
            // Then an idle loop does not iterate but for the wall-clock timer's recheck, once a
            // second (DeadlineStore.wallRecheck), and at most one flush the settling missed. The
            // window is the test's sleep as it really lasted: a loaded machine may stretch it.
            let start = ContinuousClock.now
            let before = loop.statistics.loopIterations
            try? await Task.sleep(for: .milliseconds(300))
            let after = loop.statistics.loopIterations
            let window = ContinuousClock.now - start
            let rechecks = Int(window / .seconds(1)) + 1
            #expect(
                after - before <= 1 + rechecks,
                "the loop iterated \(after - before) times in \(window) with only huge timers"
            )
            for disposable in disposables { disposable.dispose() }
            #expect(await eventually { loop.statistics.timersPending == 0 })
            #expect(fired.load(ordering: .relaxed) == 0)
        }
    }

    @Test("A stepped wall clock fires at: timers on time")
    func steppedWallClock() async throws {
        let clock = SteppableClock()
        let loop = try LoopScheduler(name: "wall", clock: clock)
        try await shuttingDown(loop) {
            let firedAt = LockedValue<Int64?>(nil)
            let firedIn = LockedValue<Int?>(nil)
            let due = Date(timeIntervalSince1970: Double(clock.wallNow()) / 1e9 + 3600)
            loop.schedule(at: due) {
                firedAt.withLock { $0 = clock.wallNow() }
                firedIn.withLock { $0 = loop.core.reporter.loopIterations }
            }
            _ = await onLoop(loop) { 0 }
            clock.stepWall(by: 3600 * 1_000_000_000)
            // Iterations ended so far (published at each iteration's end: one may be under way).
            let before = loop.statistics.loopIterations
            loop.wallClockDidChange()
            #expect(await eventually { firedAt.withLock { $0 } != nil })
            // On time: in the iterations the notice wakes (the loop's own count, not this machine's
            // speed), not at the next periodic re-check of the wall clock.
            let iterations = try #require(firedIn.withLock { $0 }) - before
            #expect(iterations <= 3, "fired \(iterations) loop iterations after the step was announced")
            let wall = try #require(firedAt.withLock { $0 })
            #expect(wall >= Nanoseconds.sinceEpoch(due))
        }
    }

    @Test("A wall clock stepped without notice is noticed within about a second")
    func steppedWallClockWithoutNotice() async throws {
        let clock = SteppableClock()
        let loop = try LoopScheduler(name: "wall2", clock: clock)
        await shuttingDown(loop) {
            let fired = Atomic<Bool>(false)
            let due = Date(timeIntervalSince1970: Double(clock.wallNow()) / 1e9 + 3600)
            loop.schedule(at: due) { fired.store(true, ordering: .relaxed) }
            _ = await onLoop(loop) { 0 }
            clock.stepWall(by: 3600 * 1_000_000_000)
            #expect(await eventually(timeout: .seconds(5)) { fired.load(ordering: .relaxed) })
        }
    }

    @Test(
        "A periodic timer's leeway never delays another timer: the loop is armed no later than the other's deadline, and it fires there",
        arguments: TimerDriverKind.all
    )
    func leewayDoesNotDelayOthers(driver: TimerDriverKind) async throws {
        // On a clock the test steps. The periodic timer (due at +10 ms, 500 ms of leeway) may wait
        // for a wake-up within its allowance, up to +510 ms; the loop must still be armed no later
        // than the one-shot's +20 ms (at it, when the two coalesce, or earlier), and the one-shot
        // fires once the clock reaches its deadline.
        let clock = SteppableClock()
        let origin = Nanoseconds.monotonicNow()
        clock.freezeMonotonic(at: origin)
        let loop = try LoopScheduler(name: "leeway", clock: clock, driver: driver)
        await shuttingDown(loop) {
            let fired = Atomic<Bool>(false)
            let periodic = loop.schedule(after: .milliseconds(10), repeatingEvery: .seconds(1), leeway: .milliseconds(500)) {}
            defer { periodic.dispose() }
            loop.schedule(after: .milliseconds(20)) { fired.store(true, ordering: .relaxed) }
            let oneShotDeadline = origin + 20_000_000
            // Armed by the prepare after the iteration that filed them (nil again for a moment each
            // time the driver fires on the frozen clock, until the next prepare re-arms it).
            let armed = LockedValue<Int64?>(nil)
            #expect(await eventually {
                let deadline = await onLoop(loop) { loop.core.timers.armedDeadline }
                armed.withLock { $0 = deadline }
                return deadline != nil
            })
            let armedAt = armed.withLock { $0 }
            #expect(armedAt.map { $0 <= oneShotDeadline } == true, "armed at \(String(describing: armedAt)), after \(oneShotDeadline)")
            let firedEarly = fired.load(ordering: .relaxed)
            #expect(!firedEarly, "the one-shot timer fired before the clock reached its deadline")
            clock.freezeMonotonic(at: oneShotDeadline)
            #expect(await eventually { fired.load(ordering: .relaxed) }, "the one-shot timer did not fire at its deadline")
        }
    }

    @Test(
        "Leeway is a coalescing allowance: a lone periodic timer ticks on its grid, also with a saturated leeway",
        arguments: TimerDriverKind.all,
        [Duration.milliseconds(50), .seconds(Int64.max) * 2]
    )
    func leewayNeverPostpones(driver: TimerDriverKind, leeway: Duration) async throws {
        // On a clock the test steps: the loop arms its wake-up for each tick's grid point (a
        // postponing leeway would arm it up to 50 ms later, a saturated one never), and each step
        // onto the next grid point brings exactly one tick.
        let clock = SteppableClock()
        let origin = Nanoseconds.monotonicNow()
        clock.freezeMonotonic(at: origin)
        let loop = try LoopScheduler(name: "coalesce", clock: clock, driver: driver)
        await shuttingDown(loop) {
            let ticks = Atomic<Int>(0)
            let ticker = loop.schedule(after: .milliseconds(10), repeatingEvery: .milliseconds(10), leeway: leeway) {
                ticks.add(1, ordering: .relaxed)
            }
            defer { ticker.dispose() }
            for tick in 1...5 {
                let gridPoint = origin + Int64(tick) * 10_000_000
                // The iteration that filed the timer or ran the last tick armed the next wake-up.
                #expect(await eventually { await onLoop(loop) { loop.core.timers.armedDeadline } == gridPoint },
                        "tick \(tick): the wake-up is not armed for its grid point")
                #expect(ticks.load(ordering: .relaxed) == tick - 1, "a tick ran before the clock reached its grid point")
                clock.freezeMonotonic(at: gridPoint)
                loop.schedule {}  // the stepped clock is read when the loop next wakes
                #expect(await eventually { ticks.load(ordering: .relaxed) == tick }, "tick \(tick) did not run on its grid point")
            }
        }
    }
}

@Suite("LoopScheduler re-armable timers")
struct LoopRearmTests {
    @Test("On the loop thread a far timer pushed back stays in its wheel slot until its bucket comes due, and fires once at its last deadline")
    func lazyOnLoopThread() async throws {
        // On a clock the test steps, from a level-3 boundary of the wheel (2^38 ns), so that a
        // 30 s timer waits in a level-2 bucket whose move is some 26 s out: every instant is
        // exact, and the action records the reading it ran at, so the test tells which deadline
        // fired.
        let clock = SteppableClock()
        let origin = (Nanoseconds.monotonicNow() >> 38 + 1) << 38
        let second: Int64 = 1_000_000_000
        clock.freezeMonotonic(at: origin)
        let loop = try LoopScheduler(name: "rearm-lazy", clock: clock)
        try await shuttingDown(loop) {
            let fired = LockedValue<[Int64]>([])
            let timer = loop.scheduleRearmable(after: .seconds(30)) { fired.withLock { $0.append(clock.monotonicNow()) } }
            let entry = try #require(timer as? LoopTimer)
            /// Steps the clock to `instant` and returns once a batch begun after the step has ended,
            /// and with it the firing of what was due then (a second round trip: the first one's
            /// task runs before its batch fires).
            func settle(at instant: Int64) async {
                clock.freezeMonotonic(at: instant)
                _ = await onLoop(loop) { 0 }
                _ = await onLoop(loop) { 0 }
            }
            // The loop's armed wake-up once it filed the timer: its bucket's move, a tick before the
            // bucket's range. (A loop that filed it before its first look at the clock filed it
            // relative to tick 0, in a level-3 bucket that starts at `origin`: that bucket moved
            // before the loop armed, filing it in the level-2 one.)
            let armed = LockedValue<Int64?>(nil)
            #expect(await eventually {
                let deadline = await onLoop(loop) { loop.core.timers.armedDeadline }
                armed.withLock { $0 = deadline }
                return deadline.map { $0 > origin + 20 * second } ?? false
            })
            let move = try #require(armed.withLock { $0 })
            let tick = Int64(1) << DeadlineStore.tickShift
            #expect(move <= origin + 30 * second && move - 65 * tick > origin, "armed at \(move - origin) ns")
            // Pushed back a thousand times on the loop thread, up to 31 s: written in place.
            let slots = await onLoop(loop) { () -> [Int] in
                let first = entry.heapIndex
                for push in 1...1_000 { _ = timer.rearm(after: .seconds(30) + .milliseconds(push)) }
                return [first, entry.heapIndex]
            }
            #expect(slots[0] <= -2, "a 30 s timer waits in the wheel: \(slots)")
            #expect(slots[0] == slots[1], "a later deadline moved the timer: \(slots)")
            // 65 ticks before the move (a small bucket moves up to 64 ticks early when the loop is
            // about to block): still in its slot, however often it was pushed back.
            await settle(at: move - 65 * tick)
            let waiting = await onLoop(loop) { entry.heapIndex }
            #expect(waiting == slots[0], "the timer left its bucket before the bucket came due")
            // Its first deadline: the bucket has moved, filing it by the deadline it has now.
            await settle(at: origin + 30 * second)
            #expect(fired.withLock { $0 }.isEmpty, "it fired at its first deadline")
            // Brought forward on the loop thread, 5 ms from the clock's reading: it moves at once and
            // fires at that deadline, neither a nanosecond before nor at the one it was pushed to.
            let broughtTo = origin + 30 * second + 5_000_000
            let rearmed = await onLoop(loop) { timer.rearm(after: .milliseconds(5)) }
            #expect(rearmed)
            await settle(at: broughtTo - 1)
            #expect(fired.withLock { $0 }.isEmpty, "it fired before the deadline it was brought forward to")
            await settle(at: broughtTo)
            #expect(fired.withLock { $0 } == [broughtTo], "fired at \(fired.withLock { $0 }.map { $0 - origin }) ns")
            await settle(at: origin + 31 * second)
            #expect(fired.withLock { $0 } == [broughtTo], "it ran again at the deadline it was pushed back to")
            #expect(await eventually { loop.statistics.timersPending == 0 })
        }
    }

    @Test("A re-armable timer made after shutdown is refused: it never runs and rearm returns false")
    func afterShutdown() async throws {
        let loop = try LoopScheduler(name: "rearm-closed")
        await loop.shutdown()
        let timer = loop.scheduleRearmable(after: .zero) {}
        #expect(timer.isDisposed)
        #expect(!timer.rearm(after: .zero))
    }

    @Test("Shutdown disposes a pending re-armable handler timer and tells its handler")
    func shutdownTellsHandler() async throws {
        let loop = try LoopScheduler(name: "rearm-shutdown")
        let told = LockedValue(false)
        let timer = loop.scheduleRearmable(after: .seconds(3_600), handler: ShutdownHandler { told.withLock { $0 = true } })
        #expect(timer.rearm(after: .seconds(7_200)))
        #expect(await eventually { loop.statistics.timersPending == 1 })
        await loop.shutdown()
        #expect(told.withLock { $0 })
        #expect(!timer.rearm(after: .zero))
    }
}

private struct ShutdownHandler: SchedulerTimerHandler {
    let cancelled: @Sendable () -> Void
    func timerFired() {}
    func timerCancelledByScheduler() { cancelled() }
}
