import Dispatch
import Foundation
import LoopSchedulingTestSupport
import Scheduling
import Synchronization
import Testing

/// Races between disposal and execution. `make test` runs this suite again under the thread
/// sanitizer.
@Suite("Races")
struct Races {
    @Test("Disposing from 8 threads at once runs the dispose action exactly once")
    func disposeFromEightThreads() async {
        // `concurrentPerform` blocks its caller until every worker is done: a thread made for it.
        let outcomes = await onOwnThread { () -> [(runs: Int, isDisposed: Bool)] in
            (0..<200).map { _ in
                let runs = Atomic<Int>(0)
                let disposable = ActionDisposable { runs.add(1, ordering: .relaxed) }
                DispatchQueue.concurrentPerform(iterations: 8) { _ in disposable.dispose() }
                return (runs.load(ordering: .relaxed), disposable.isDisposed)
            }
        }
        for outcome in outcomes {
            #expect(outcome.runs == 1)
            #expect(outcome.isDisposed)
        }
    }

    @Test("Disposing scheduled work from 8 threads at once is safe", arguments: SchedulerKind.crossThread(SchedulerKind.deferred))
    func disposeScheduledFromEightThreads(kind: SchedulerKind) async throws {
        try await Harness.with(kind) { harness in
            let scheduler = harness.dateScheduler
            let disposed = await onOwnThread { () -> [Bool] in
                (0..<50).map { _ in
                    let disposable = scheduler.schedule(after: .seconds(10)) {}
                    DispatchQueue.concurrentPerform(iterations: 8) { _ in disposable.dispose() }
                    return disposable.isDisposed
                }
            }
            #expect(disposed.allSatisfy { $0 })
        }
    }

    @Test(
        "No action starts after a dispose() that found it pending returned, and one whose dispose() lost runs once, while actions fire",
        arguments: SchedulerKind.crossThread(SchedulerKind.deferred)
    )
    func noStartAfterDispose(kind: SchedulerKind) async throws {
        try await Harness.with(kind) { harness in
            let total = 2000
            let perWorker = total / 4
            // The contract is about the claim, not the action's first instruction: a dispose() that
            // found the action pending (it says so: `disposeReportingPending`) promises it never
            // starts; one that lost found it claimed, and the action then runs once, perhaps only
            // after dispose() returned (a timestamp in the action cannot tell the two apart). So a
            // winning disposer marks the action (2) and an action that finds the mark started after
            // a dispose that won; every action whose dispose lost must run.
            let actions = (0..<total).map { _ in RaceCell() }
            let lateStarts = Atomic<Int>(0)
            // A pthread lock, not `Mutex`: the thread sanitizer sees it (see `LockedValue`).
            let lostDisposes = LockedValue<[Int]>([])
            let unreported = Atomic<Int>(0)
            let wonAfterStart = Atomic<Int>(0)
            let stop = Atomic<Bool>(false)
            var driver: Task<Void, Never>?
            if let testScheduler = harness.testScheduler {
                // Virtual time advances on another thread while the workers schedule and dispose,
                // so disposal races with firing here too.
                driver = Task {
                    await onOwnThread {
                        while !stop.load(ordering: .acquiring) { testScheduler.advance(by: .microseconds(10)) }
                    }
                }
            }
            @Sendable func isDisposed(_ id: Int) -> Bool { (id / perWorker + id % perWorker) % 2 == 0 }
            let scheduler = harness.dateScheduler
            // `concurrentPerform` blocks its caller until every worker is done: a thread made for it.
            await onOwnThread {
                DispatchQueue.concurrentPerform(iterations: 4) { worker in
                    for index in 0..<perWorker {
                        let id = worker * perWorker + index
                        let disposable = scheduler.schedule(after: .microseconds(index % 3 * 50)) {
                            let (started, found) = actions[id].mark.compareExchange(
                                expected: 0,
                                desired: 1,
                                ordering: .acquiringAndReleasing
                            )
                            if !started && found == 2 { lateStarts.add(1, ordering: .relaxed) }
                            actions[id].runs.add(1, ordering: .relaxed)
                        }
                        if isDisposed(id) {
                            guard let reporting = disposable as? any DisposeOutcomeReporting else {
                                unreported.add(1, ordering: .relaxed)
                                disposable.dispose()
                                continue
                            }
                            if reporting.disposeReportingPending() {
                                let (marked, _) = actions[id].mark.compareExchange(
                                    expected: 0,
                                    desired: 2,
                                    ordering: .acquiringAndReleasing
                                )
                                // The action had started, yet dispose() said it was still waiting.
                                if !marked { wonAfterStart.add(1, ordering: .relaxed) }
                            } else {
                                lostDisposes.withLock { $0.append(id) }
                            }
                        }
                    }
                }
                // From this thread, not after the hop back: the driver spins until told, however long
                // this task waits for a pool thread.
                stop.store(true, ordering: .releasing)
            }
            await driver?.value
            #expect(unreported.load(ordering: .relaxed) == 0, "disposables that do not report whether dispose() won")
            let kept = (0..<total).filter { !isDisposed($0) } + lostDisposes.withLock { $0 }
            let allRan = await harness.eventually { kept.allSatisfy { actions[$0].runs.load(ordering: .relaxed) >= 1 } }
            #expect(allRan, "an action that was not disposed, or whose dispose() lost, never ran")
            // Give a wrongly kept disposed action the time to start late.
            await harness.letTimePass(.milliseconds(5))
            let ranTwice = (0..<total).filter { actions[$0].runs.load(ordering: .relaxed) > 1 }
            #expect(ranTwice.isEmpty, "actions ran more than once: \(ranTwice.prefix(10))")
            let lateStartsValue = lateStarts.load(ordering: .relaxed)
            #expect(lateStartsValue == 0, "\(lateStartsValue) actions started after a dispose() that won returned")
            let wonAfterStartValue = wonAfterStart.load(ordering: .relaxed)
            #expect(wonAfterStartValue == 0, "\(wonAfterStartValue) dispose() calls won against an action that had started")
        }
    }

    @Test(
        "A captured object is released promptly once its action is disposed from another thread",
        arguments: SchedulerKind.crossThread(SchedulerKind.deferred)
    )
    func capturedReleasedAfterRemoteDispose(kind: SchedulerKind) async throws {
        try await Harness.with(kind) { harness in
            var tracked: Tracked? = Tracked()
            let weak = WeakBox(tracked!)
            let disposable = harness.dateScheduler.schedule(after: .seconds(60)) { [tracked] in _ = tracked }
            tracked = nil
            await onOwnThread { disposable.dispose() }
            #expect(await harness.eventually(timeout: .seconds(5)) { weak.isNil })
        }
    }
}

/// One action's record in a race: its start-or-disposed mark and how many times it ran.
private final class RaceCell: Sendable {
    let mark = Atomic<UInt8>(0)
    let runs = Atomic<Int>(0)
}
