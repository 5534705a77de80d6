import Dispatch
import Foundation
import LoopSchedulingTestSupport
import Scheduling
import Synchronization
import Testing

extension Conformance {
    /// Rule 13: a re-armable timer moves in place. A re-arm that finds it pending returns true and
    /// the action runs once, never before the new deadline; one that finds it disposed, run or
    /// running returns false and changes nothing; racing the old deadline, exactly one wins; equal
    /// deadlines keep the order of first scheduling.
    @Suite("13. Re-arm")
    struct Rearm {
        @Test("A pending timer pushed back runs once, never before its new deadline", arguments: SchedulerKind.dateSchedulers)
        func pushedBack(kind: SchedulerKind) async throws {
            try await Harness.with(kind) { harness in
                let log = Recorder<Int64>(harness)
                let scheduledAt = harness.monotonicNow()
                let timer = harness.dateScheduler.scheduleRearmable(after: .milliseconds(200)) {
                    log.append(harness.monotonicNow())
                }
                let rearmedAt = harness.monotonicNow()
                // True unless this thread was held past the first deadline: then the timer ran there.
                let rearmed = timer.rearm(after: .milliseconds(300))
                let returnedAt = harness.monotonicNow()
                #expect(await log.wait(for: 1))
                await harness.letTimePass(.milliseconds(350))
                #expect(log.count == 1, "a re-armed timer ran \(log.count) times")
                let started = try #require(log.all.first)
                if rearmed {
                    #expect(started >= rearmedAt + 300_000_000, "ran \((rearmedAt + 300_000_000 - started) / 1000) µs before its new deadline")
                } else {
                    // Refused: the timer had been taken to run at its first deadline, so the refusal
                    // came no earlier than that, and the run did not start before it. (How late the
                    // run started says nothing on a loaded machine: no upper bound here.)
                    #expect(returnedAt >= scheduledAt + 200_000_000, "a re-arm refused before the first deadline")
                    #expect(started >= scheduledAt + 200_000_000, "ran before its first deadline")
                }
                #expect(!timer.rearm(after: .zero), "a timer that ran was re-armed")
                await harness.letTimePass(.milliseconds(5))
                #expect(log.count == 1)
            }
        }

        @Test("A timer pushed back a thousand times runs once, after the last deadline", arguments: SchedulerKind.dateSchedulers)
        func pushedBackOften(kind: SchedulerKind) async throws {
            try await Harness.with(kind) { harness in
                let log = Recorder<Int64>(harness)
                let timer = harness.dateScheduler.scheduleRearmable(after: .seconds(30)) { log.append(harness.monotonicNow()) }
                var last: Int64 = 0
                for _ in 0..<1_000 {
                    last = harness.monotonicNow()
                    #expect(timer.rearm(after: .seconds(30)))
                }
                last = harness.monotonicNow()
                #expect(timer.rearm(after: .milliseconds(10)), "brought forward after the pushes")
                #expect(await log.wait(for: 1))
                #expect(log.all.first! >= last + 10_000_000)
                await harness.letTimePass(.milliseconds(20))
                #expect(log.count == 1)
            }
        }

        @Test(
            "Re-armed from inside actions of its own scheduler, it runs once, after the last new deadline",
            arguments: SchedulerKind.dateSchedulers.filter { $0 != .concurrentQueue }
        )
        func fromInsideItsScheduler(kind: SchedulerKind) async throws {
            try await Harness.with(kind) { harness in
                let scheduler = harness.dateScheduler
                let log = Recorder<Int64>(harness)
                let rearms = Recorder<(Int64, Bool)>(harness)
                // The scheduler's thread held while the timer is made and the re-arming actions queue
                // up, so that they run back to back, ahead of the timer's first deadline, with nothing
                // of the scheduler's between them (its timers' firing included), however slowly this
                // machine sends or runs them: no re-arm can find the timer already run, by its first
                // 30 s or by an earlier re-arm's 15 ms.
                let gate = SchedulerGate()
                if !kind.runsOnTestThread { await gate.hold(scheduler) }
                defer { gate.letGo() }
                let timer = scheduler.scheduleRearmable(after: .seconds(30)) { log.append(harness.monotonicNow()) }
                for _ in 0..<100 {
                    scheduler.schedule { rearms.append((harness.monotonicNow(), timer.rearm(after: .milliseconds(15)))) }
                }
                gate.letGo()
                #expect(await log.wait(for: 1))
                await harness.letTimePass(.milliseconds(30))
                #expect(log.count == 1)
                let refused = rearms.all.filter { !$0.1 }.count
                #expect(refused == 0, "\(refused) re-arms of a pending timer returned false")
                let last = rearms.all.map(\.0).max()!
                #expect(log.all.first! >= last + 15_000_000, "ran before the last re-arm's deadline")
            }
        }

        @Test("A timer brought forward runs at its new, earlier deadline", arguments: SchedulerKind.dateSchedulers)
        func broughtForward(kind: SchedulerKind) async throws {
            try await Harness.with(kind) { harness in
                let log = Recorder<Int64>(harness)
                let timer = harness.dateScheduler.scheduleRearmable(after: .seconds(3_600)) { log.append(harness.monotonicNow()) }
                let rearmedAt = harness.monotonicNow()
                #expect(timer.rearm(after: .milliseconds(5)))
                #expect(await log.wait(for: 1, timeout: .seconds(20)), "the timer brought forward did not run")
                #expect(log.all.first! >= rearmedAt + 5_000_000)
            }
        }

        @Test("Re-arming a disposed timer returns false and it never runs", arguments: SchedulerKind.dateSchedulers)
        func disposed(kind: SchedulerKind) async throws {
            try await Harness.with(kind) { harness in
                let log = Recorder<Int>(harness)
                let timer = harness.dateScheduler.scheduleRearmable(after: .milliseconds(5)) { log.append(1) }
                timer.dispose()
                #expect(timer.isDisposed)
                #expect(!timer.rearm(after: .milliseconds(1)))
                #expect(!timer.rearm(at: harness.dateScheduler.now))
                await harness.letTimePass(.milliseconds(20))
                #expect(log.count == 0)
            }
        }

        @Test("Re-arming from inside its own action returns false: a timer runs at most once", arguments: SchedulerKind.dateSchedulers)
        func fromItsOwnAction(kind: SchedulerKind) async throws {
            try await Harness.with(kind) { harness in
                let log = Recorder<Bool>(harness)
                let slot = LockedValue<(any RearmableTimer)?>(nil)
                let ready = DispatchSemaphore(value: 0)
                let timer = harness.dateScheduler.scheduleRearmable(after: .milliseconds(2)) {
                    if !kind.runsOnTestThread { ready.wait() }
                    log.append(slot.withLock { $0 }!.rearm(after: .milliseconds(1)))
                }
                slot.withLock { $0 = timer }
                ready.signal()
                #expect(await log.wait(for: 1))
                await harness.letTimePass(.milliseconds(20))
                #expect(log.all == [false])
            }
        }

        @Test(
            "Among equal deadlines a re-armed timer keeps the place of its first scheduling",
            arguments: SchedulerKind.realTime(SchedulerKind.dateSchedulers.filter { $0 != .concurrentQueue })
        )
        func orderOfFirstScheduling(kind: SchedulerKind) async throws {
            try await Harness.with(kind) { harness in
                let scheduler = harness.dateScheduler
                let log = Recorder<String>(harness)
                let due = scheduler.now.addingTimeInterval(0.3)
                let first = scheduler.scheduleRearmable(at: due.addingTimeInterval(3_600)) { log.append("first") }
                scheduler.schedule(at: due) { log.append("second") }
                #expect(first.rearm(at: due))
                #expect(await log.wait(for: 2))
                #expect(log.all == ["first", "second"])
            }
        }

        @Test("The handler form keeps its handler across re-arms", arguments: SchedulerKind.dateSchedulers)
        func handlerForm(kind: SchedulerKind) async throws {
            try await Harness.with(kind) { harness in
                let times = Recorder<Int64>(harness)
                let handler = CountingHandler { times.append(harness.monotonicNow()) }
                let timer = harness.dateScheduler.scheduleRearmable(after: .seconds(3_600), handler: handler)
                let rearmedAt = harness.monotonicNow()
                #expect(timer.rearm(after: .milliseconds(5)))
                #expect(await times.wait(for: 1))
                #expect(times.all.first! >= rearmedAt + 5_000_000)
                await harness.letTimePass(.milliseconds(10))
                #expect(handler.fired == 1)
            }
        }

        @Test(
            "A re-arm racing the old deadline on another thread: exactly one run, never before a winning re-arm's deadline",
            arguments: SchedulerKind.dateSchedulers.filter { !$0.isVirtual }
        )
        func raceWithFire(kind: SchedulerKind) async throws {
            try await Harness.with(kind) { harness in
                for round in 0..<150 {
                    let runs = Recorder<Int64>(harness)
                    let delay = Int64(300_000 + round % 7 * 100_000)
                    let scheduledAt = harness.monotonicNow()
                    let timer = harness.dateScheduler.scheduleRearmable(after: .nanoseconds(delay)) {
                        runs.append(harness.monotonicNow())
                    }
                    // From a thread of its own, near the old deadline.
                    let (rearmedAt, rearmed, returnedAt) = await onOwnThread { () -> (Int64, Bool, Int64) in
                        let until = Nanoseconds.monotonicNow() + Int64(250_000 + round % 5 * 100_000)
                        while Nanoseconds.monotonicNow() < until {}
                        let at = Nanoseconds.monotonicNow()
                        let rearmed = timer.rearm(after: .milliseconds(2))
                        return (at, rearmed, Nanoseconds.monotonicNow())
                    }
                    #expect(await runs.wait(for: 1), "round \(round): the timer never ran (re-arm \(rearmed))")
                    await harness.letTimePass(.milliseconds(4))
                    #expect(runs.count == 1, "round \(round): ran \(runs.count) times")
                    let ran = try #require(runs.all.first)
                    // Both outcomes are legal, each with its own promise. Won: the run waited for the
                    // new deadline. Lost: the timer had been taken to run at its old deadline, so the
                    // refusal came no earlier than that deadline, and the run did not start before it.
                    if rearmed {
                        #expect(ran >= rearmedAt + 2_000_000, "round \(round): ran before the winning re-arm's deadline")
                    } else {
                        #expect(returnedAt >= scheduledAt + delay, "round \(round): a re-arm refused before the old deadline")
                        #expect(ran >= scheduledAt + delay, "round \(round): ran before its deadline")
                    }
                }
            }
        }
    }
}

/// A handler that counts its calls and tells a closure.
private final class CountingHandler: SchedulerTimerHandler {
    let onFire: @Sendable () -> Void
    private let count = Atomic<Int>(0)
    var fired: Int { count.load(ordering: .relaxed) }

    init(_ onFire: @escaping @Sendable () -> Void) { self.onFire = onFire }

    func timerFired() {
        count.add(1, ordering: .relaxed)
        onFire()
    }
}
