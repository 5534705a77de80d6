import Foundation
import LoopSchedulingTestSupport
import Scheduling
import Synchronization
import Testing

extension Conformance.Rearm {
    @Test(
        "Re-armed at once from an action on its scheduler and from another thread: runs once, never before the earlier of the two sides' last accepted deadlines",
        arguments: SchedulerKind.dateSchedulers.filter { !$0.isVirtual }
    )
    func fromBothSides(kind: SchedulerKind) async throws {
        try await Harness.with(kind) { harness in
            let scheduler = harness.dateScheduler
            for round in 0..<20 {
                // 0.2 ms every other round, so that the timer may come due while the re-arms go on.
                let delay: Int64 = round % 2 == 0 ? 200_000 : 3_000_000
                let runs = Recorder<Int64>(harness)
                let timer = scheduler.scheduleRearmable(after: .nanoseconds(delay)) { runs.append(harness.monotonicNow()) }
                let meeting = Rendezvous()
                let inAction = Recorder<RearmSide>(harness)
                scheduler.schedule {
                    meeting.arriveAndWait()
                    inAction.append(RearmSide.run(timer, delay: delay, count: 2_000, now: harness.monotonicNow))
                }
                let outside = await onOwnThread {
                    meeting.arriveAndWait()
                    return RearmSide.run(timer, delay: delay, count: 2_000, now: harness.monotonicNow)
                }
                #expect(await inAction.wait(for: 1))
                #expect(await runs.wait(for: 1), "round \(round): the timer never ran")
                await harness.letTimePass(.milliseconds(5))
                #expect(runs.count == 1, "round \(round): ran \(runs.count) times")
                let sides = [inAction.all[0], outside]
                let refusedOnlyAfterRunning = sides.allSatisfy { $0.refusedOnlyAfterRunning }
                #expect(refusedOnlyAfterRunning, "round \(round): a re-arm was accepted after one was refused")
                if let earliest = sides.compactMap(\.lastAccepted).min() {
                    #expect(runs.all[0] >= earliest + delay, "round \(round): ran before both sides' last accepted deadlines")
                }
            }
        }
    }

    @Test(
        "A re-arm in an action on its scheduler after another thread's dispose returned is refused, and the timer never runs",
        arguments: SchedulerKind.dateSchedulers.filter { !$0.isVirtual }
    )
    func afterDisposeOnAnotherThread(kind: SchedulerKind) async throws {
        try await Harness.with(kind) { harness in
            let scheduler = harness.dateScheduler
            for round in 0..<20 {
                let runs = Recorder<Int>(harness)
                let timer = scheduler.scheduleRearmable(after: .seconds(30)) { runs.append(1) }
                let meeting = Rendezvous()
                let disposed = DisposedFlag()
                let acceptedAfterDispose = Recorder<Int>(harness)
                scheduler.schedule {
                    meeting.arriveAndWait()
                    var accepted = 0
                    var afterDispose = 0
                    // Until 100 re-arms after the dispose was seen (bounded, should the other
                    // thread never get to run).
                    for _ in 0..<10_000_000 where afterDispose < 100 {
                        let seen = disposed.isSet
                        if timer.rearm(after: .seconds(30)), seen { accepted += 1 }
                        if seen { afterDispose += 1 }
                    }
                    acceptedAfterDispose.append(accepted)
                }
                await onOwnThread {
                    meeting.arriveAndWait()
                    for _ in 0..<(round * 50) { _ = timer.rearm(after: .seconds(30)) }
                    timer.dispose()
                    disposed.set()
                }
                #expect(await acceptedAfterDispose.wait(for: 1))
                #expect(acceptedAfterDispose.all == [0], "round \(round): re-arms accepted after the dispose returned")
                #expect(!timer.rearm(after: .milliseconds(1)))
                await harness.letTimePass(.milliseconds(5))
                #expect(runs.count == 0, "round \(round): a disposed timer ran")
            }
        }
    }
}

/// What one side of ``Conformance/Rearm/fromBothSides(kind:)`` saw.
private struct RearmSide: Sendable {
    /// When the side's last accepted re-arm started (its deadline is at least this + delay).
    var lastAccepted: Int64?
    /// No re-arm was accepted after one was refused (refused means the timer ran).
    var refusedOnlyAfterRunning = true

    static func run(_ timer: any RearmableTimer, delay: Int64, count: Int, now: () -> Int64) -> RearmSide {
        var side = RearmSide()
        var refused = false
        for _ in 0..<count {
            let startedAt = now()
            if timer.rearm(after: .nanoseconds(delay)) {
                if refused { side.refusedOnlyAfterRunning = false }
                side.lastAccepted = startedAt
            } else {
                refused = true
            }
        }
        return side
    }
}

/// Two threads start together: each waits for the other (a few microseconds; it yields meanwhile).
private final class Rendezvous: Sendable {
    private let arrived = Atomic<Int>(0)

    func arriveAndWait() {
        arrived.add(1, ordering: .acquiringAndReleasing)
        while arrived.load(ordering: .acquiring) < 2 { sched_yield() }
    }
}

/// Set after `dispose()` returned; whoever sees it set sees the dispose.
private final class DisposedFlag: Sendable {
    private let flag = Atomic<Bool>(false)
    var isSet: Bool { flag.load(ordering: .acquiring) }
    func set() { flag.store(true, ordering: .releasing) }
}
