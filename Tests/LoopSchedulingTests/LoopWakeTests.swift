import Dispatch
import Foundation
import Scheduling
import Synchronization
import LoopSchedulingTestSupport
import Testing

@testable import LoopEngine
@testable import LoopScheduling

/// Counts the loop's iterations exactly: the delegate hears every one, as it ends.
private final class IterationCounter: LoopSchedulerMetricsDelegate {
    let count = Atomic<Int>(0)
    func loopIterationDidEnd(_ info: LoopIterationInfo) { count.add(1, ordering: .relaxed) }
    var value: Int { count.load(ordering: .relaxed) }
}

/// Which cross-thread timers and cancellations wake the loop (RemoteQueue's promise): the ones
/// the loop's armed wake-up does not already cover, and never at the cost of a late or reordered
/// timer.
@Suite("LoopScheduler wake-ups for timers from other threads")
struct LoopWakeTests {
    /// A loop on its own thread with an iteration counter.
    private static func makeLoop(_ name: String, driver: TimerDriverKind) throws -> (LoopScheduler, IterationCounter) {
        let counter = IterationCounter()
        return (try makeLoop(name, driver: driver, delegate: counter), counter)
    }

    /// A loop on its own thread on the system clock, reporting to `delegate`.
    private static func makeLoop(
        _ name: String,
        driver: TimerDriverKind,
        delegate: any LoopSchedulerMetricsDelegate
    ) throws -> LoopScheduler {
        try LoopScheduler(
            name: name,
            mode: .ownThread,
            adopting: nil,
            clock: SystemClock(),
            driver: driver,
            metricsDelegate: delegate
        )
    }

    /// Returns once the loop has ended the iteration of a batch run now, i.e. it has armed its
    /// driver and published its promise, and has nothing else to do.
    private static func settle(_ loop: LoopScheduler, _ counter: IterationCounter) async {
        let during = await onLoop(loop) { counter.value }
        #expect(await eventually { counter.value > during })
    }

    /// Holds `loop` at the end of an iteration armed further out than the flush interval: not flushing,
    /// nor keeping the arming of a look it flushed for. The hold is asked for from the loop thread, in a
    /// batch, so the iteration held is the one that batch ends, never one that ended before it and has
    /// not reported yet. An iteration still armed within the interval is let go: its look comes within
    /// the interval, finds nothing and arms further out, which the next hold then sees. Returns whether
    /// the loop is held so.
    private static func holdArmedFarOut(_ loop: LoopScheduler, _ hold: FlushHold) async -> Bool {
        for attempt in 0..<3 {
            await onLoop(loop) { hold.holdNextIteration() }
            #expect(await eventually { hold.held != nil }, "hold \(attempt): the iteration that asked for it was not held")
            if let held = hold.held, !held.looksWithinFlushInterval { return true }
            hold.letGo()
            #expect(
                await eventually { hold.latest.map { !$0.looksWithinFlushInterval } ?? false },
                "hold \(attempt): the loop kept looking with nothing to flush"
            )
        }
        return false
    }

    @Test(
        "A cancellation from another thread wakes an awake loop never and one asleep and not flushing once; cancellations and timers at or after the armed wake-up never wake a flushing loop; each look is armed within the flush interval and files them, and the flushing stops once none come",
        arguments: TimerDriverKind.all
    )
    func coveredItemsWakeOncePerFlush(driver: TimerDriverKind) async throws {
        // The loop is stopped where the test knows its promise (inside a batch: awake; or held at the
        // end of an iteration, its promise published): what this thread sends meanwhile meets exactly
        // that promise, however fast either side runs.
        let hold = FlushHold()
        let loop = try Self.makeLoop("wake-later", driver: driver, delegate: hold)
        hold.watch(loop)
        // Swapped in before anything is submitted; this thread is the only one that submits.
        let wakes = WakeCounter(forwardingTo: loop.core.driver)
        loop.core.remote.setWaker(wakes)
        try await shuttingDown(loop) {
            defer { hold.stopHolding() }
            // Timers to cancel, two hours out; then the loop stops flushing and arms for its timers.
            let far = (0..<100).map { _ in loop.schedule(after: .seconds(7200)) {} }
            #expect(await eventually { loop.statistics.timersPending == 100 })
            // Each cancellation below meets a promise the test knows, because the test holds the loop thread
            // while sending it: inside a batch (awake) or at the end of an iteration (its promise published).
            // And the hold of the iteration that takes it is asked for only there: an iteration that ended
            // earlier cannot be taken for it. (`timersPending` shows the far timers filed before the iteration
            // that filed them has ended: a hold asked for then caught that iteration, published and armed far
            // out, instead of the one that took the cancellation.)
            try #require(await Self.holdArmedFarOut(loop, hold), "the loop was not held armed further out than the flush interval in 3 tries")
            // Awake, from taking its queue until it publishes a promise: a cancellation waits for the loop's
            // look before it blocks, wakes nothing and starts no flushing.
            let gate = SchedulerGate()
            defer { gate.letGo() }
            gate.close(loop)
            hold.letGo()
            #expect(await eventually { gate.isInside }, "the loop did not run the task that stops it")
            var wakesBefore = wakes.count
            hold.holdNext()
            far[0].dispose()
            #expect(wakes.count == wakesBefore, "a cancellation woke an awake loop")
            gate.letGo()
            #expect(await eventually { hold.held != nil }, "no iteration took the cancellation sent to the awake loop")
            #expect(!(try #require(hold.held).looksWithinFlushInterval), "taken awake, the loop flushes")
            // Held at the end of that iteration: not flushing, armed far out. A cancellation wakes the loop
            // once and asks it to flush.
            wakesBefore = wakes.count
            hold.holdNext()
            far[1].dispose()
            #expect(wakes.count == wakesBefore + 1, "a cancellation sent \(wakes.count - wakesBefore) wake-ups to a loop armed far out")
            hold.letGo()
            #expect(await eventually { hold.held != nil }, "no iteration took the cancellation that woke the loop")
            #expect(try #require(hold.held).looksWithinFlushInterval, "woken, the loop does not flush")
            let cancelled = 2
            let flushingWakes = wakes.count
            let rounds = 5
            for round in 0..<rounds {
                #expect(await eventually { hold.held != nil }, "round \(round): no iteration took the items")
                let stop = try #require(hold.held)
                let armed = try #require(stop.armed, "round \(round): nothing armed")
                #expect(
                    armed <= stop.end + LoopCore.flushInterval,
                    "round \(round): armed \(armed - stop.end) ns out, not a look within the flush interval"
                )
                // Cancellations, timers due after the look (an hour out: none fires during the test,
                // however long it stalls), and withTimeout's pattern (a timer disposed before the loop
                // saw it): all wait for the look.
                for index in 0..<10 {
                    far[cancelled + round * 10 + index].dispose()
                    loop.schedule(after: .seconds(3600)) {}
                    loop.schedule(after: .seconds(3600)) {}
                    loop.schedule(after: .seconds(3600)) {}.dispose()
                }
                #expect(wakes.count == flushingWakes, "round \(round): an item woke a flushing loop")
                if round < rounds - 1 { hold.holdNext() }
                hold.letGo()
            }
            // The last look files the last round's items: 50 more far timers cancelled, 100 timers added.
            let expected = 100 - cancelled - 50 + 100
            #expect(await eventually { loop.statistics.timersPending == expected }, "the looks did not file every item")
            #expect(
                await eventually { hold.latest.map { !$0.looksWithinFlushInterval } ?? false },
                "the loop kept looking with nothing to flush"
            )
            #expect(wakes.count == flushingWakes, "the looks took every item without another wake-up")
        }
        withExtendedLifetime(wakes) {}
    }

    @Test("A timer from another thread due before the armed wake-up fires on time", arguments: TimerDriverKind.all)
    func earlierTimerWakes(driver: TimerDriverKind) async throws {
        let (loop, counter) = try Self.makeLoop("wake-earlier", driver: driver)
        await shuttingDown(loop) {
            let armedFired = Atomic<Bool>(false)
            let armed = loop.schedule(after: .seconds(3600)) { armedFired.store(true, ordering: .relaxed) }
            defer { armed.dispose() }
            #expect(await eventually { loop.statistics.timersPending == 1 })
            for round in 0..<10 {
                await Self.settle(loop, counter)
                let start = Nanoseconds.monotonicNow()
                let delay: Int64 = 20_000_000
                let firedAt = Atomic<Int64>(0)
                if round % 2 == 0 {
                    loop.schedule(after: .nanoseconds(delay)) {
                        firedAt.store(Nanoseconds.monotonicNow(), ordering: .relaxed)
                    }
                } else {
                    // Wall-clock timers keep waking the loop.
                    loop.schedule(at: Date().addingTimeInterval(0.02)) {
                        firedAt.store(Nanoseconds.monotonicNow(), ordering: .relaxed)
                    }
                }
                // Generous: a timer that waited for the armed wake-up would be an hour late.
                #expect(await eventually(timeout: .seconds(10)) { firedAt.load(ordering: .relaxed) != 0 }, "round \(round)")
                let elapsed = firedAt.load(ordering: .relaxed) - start
                if round % 2 == 0 { #expect(elapsed >= delay, "round \(round) fired \(delay - elapsed) ns early") }
                let armedFiredValue = armedFired.load(ordering: .relaxed)
                #expect(!armedFiredValue)
            }
        }
    }

    @Test(
        "Threads racing timers around the armed deadline while the loop re-arms: all fire, none early, in deadline order",
        arguments: TimerDriverKind.all
    )
    func raceAroundArmedDeadline(driver: TimerDriverKind) async throws {
        let (loop, counter) = try Self.makeLoop("wake-race", driver: driver)
        await shuttingDown(loop) {
            // Nothing else would wake the loop for a minute: a timer left behind never fires.
            let sentinel = loop.schedule(after: .seconds(60)) {}
            defer { sentinel.dispose() }
            let threads = 4
            let perThread = 200
            let count = threads * perThread
            /// What the test knows of one timer: its deadline lies in `earliest...latest` (the clock is
            /// read inside `schedule`), and `iterations` loop iterations had ended when `schedule`
            /// returned.
            struct Submission {
                var earliest: Int64 = 0
                var latest: Int64 = 0
                var iterations = 0
            }
            for round in 0..<6 {
                // Half the rounds with a ticker re-arming the driver every few milliseconds.
                let ticker =
                    round % 2 == 1 ? loop.schedule(after: .milliseconds(1), repeatingEvery: .milliseconds(3)) {} : nil
                let submissions = LockedValue([Submission](repeating: Submission(), count: count))
                let fires = LockedValue<[(index: Int, at: Int64, iterations: Int)]>([])
                fires.withLock { $0.reserveCapacity(count) }
                // The armed one, 40 ms out; the others fall in [0, 80 ms], around it.
                let anchor = await onLoop(loop) { loop.schedule(after: .milliseconds(40)) {} }
                // `concurrentPerform` and the pacing sleeps block: a thread made for them.
                await onOwnThread {
                    DispatchQueue.concurrentPerform(iterations: threads) { thread in
                        var random = SplitMix(seed: UInt64(round * 1_000 + thread))
                        for offset in 0..<perThread {
                            let index = thread * perThread + offset
                            let delay = Int64(random.next() % 80_000_000)
                            let start = Nanoseconds.monotonicNow()
                            loop.schedule(after: .nanoseconds(delay)) {
                                let now = Nanoseconds.monotonicNow()
                                let iterations = counter.value
                                fires.withLock { $0.append((index, now, iterations)) }
                            }
                            let iterations = counter.value
                            let done = Nanoseconds.monotonicNow()
                            submissions.withLock {
                                $0[index] = Submission(earliest: start + delay, latest: done + delay, iterations: iterations)
                            }
                            if random.next() % 4 == 0 { usleep(UInt32(random.next() % 300)) }
                        }
                    }
                }
                #expect(
                    await eventually { fires.withLock { $0.count } == count },
                    "round \(round): \(count - fires.withLock { $0.count }) timers never fired"
                )
                ticker?.dispose()
                anchor.dispose()
                let log = fires.withLock { $0 }
                let submitted = submissions.withLock { $0 }
                let early = log.filter { $0.at < submitted[$0.index].earliest }
                #expect(early.isEmpty, "round \(round): \(early.count) timers fired early")
                // The promise: a timer queued when k iterations had ended is filed at the latest by the
                // first batch after iteration k + 1 ended (that iteration's prepare takes what waits
                // without a wake-up; with a wake-up pending, the next batch takes it before it fires
                // anything). So no timer due surely later may fire before it from then on. (A margin
                // in time instead would not hold on a loaded machine, where one pass of firing can
                // outlast any margin while a submission lands in the queue.)
                var inversions = 0
                for (position, fire) in log.enumerated() {
                    let mine = submitted[fire.index]
                    let overtaken = log[..<position].contains { earlier in
                        submitted[earlier.index].earliest > mine.latest && earlier.iterations > mine.iterations
                    }
                    if overtaken { inversions += 1 }
                }
                #expect(
                    inversions == 0,
                    "round \(round): \(inversions) timers fired after one due later, an iteration after they were queued"
                )
            }
        }
    }

    @Test("A timer queued without a wake-up keeps its place before an equal one scheduled on the loop outside a batch")
    func deferredTimerKeepsOrderBeforeLocal() async throws {
        let clock = SteppableClock()
        let frozen = Nanoseconds.monotonicNow()
        clock.freezeMonotonic(at: frozen)
        let hook = PrepareHook()
        let loop = try LoopScheduler(
            name: "wake-order",
            mode: .ownThread,
            adopting: nil,
            clock: clock,
            driver: .preferred,
            metricsDelegate: hook
        )
        await shuttingDown(loop) {
            let order = LockedValue<[Int]>([])
            // The armed wake-up, 10 s out on the frozen clock.
            let armed = loop.schedule(after: .seconds(10)) {}
            #expect(await eventually { loop.statistics.timersPending == 1 })
            // The loop's next prepare, having published its promise, waits in the delegate (on the loop
            // thread, outside any batch) for a timer from this thread, then schedules an equal one.
            hook.arm { [loop] in
                loop.schedule(after: .seconds(20)) { order.withLock { $0.append(2) } }
            }
            // A timer the armed wake-up covers wakes the loop to flush: the promise it publishes next
            // lets the timer below wait without a wake-up.
            let flushStarter = loop.schedule(after: .seconds(30)) {}
            await hook.waitUntilInside()
            loop.schedule(after: .seconds(20)) { order.withLock { $0.append(1) } }
            await hook.proceedAndWait()
            _ = await onLoop(loop) { 0 }
            #expect(await eventually { loop.statistics.timersPending == 4 })
            // Both due: the next batch fires them in (deadline, scheduling order).
            clock.freezeMonotonic(at: frozen + 30_000_000_000)
            loop.schedule {}
            #expect(await eventually { order.withLock { $0.count } == 2 })
            #expect(order.withLock { $0 } == [1, 2])
            armed.dispose()
            flushStarter.dispose()
        }
    }
}
