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

    @Test("Disposing scheduled work from 8 threads at once is safe", arguments: SchedulerKind.deferred)
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

    @Test("No action starts after dispose() returned, while actions fire", arguments: SchedulerKind.deferred)
    func noStartAfterDispose(kind: SchedulerKind) async throws {
        try await Harness.with(kind) { harness in
            let total = 2000
            let perWorker = total / 4
            // Per action, whichever comes first wins: the action's first instruction marks it
            // started (1), or the disposer, once dispose() has returned, marks it disposed (2). An
            // action that finds 2 began after dispose() returned; one that started just before
            // dispose() returned finds 0 and is fine, wherever it is when the disposer looks.
            let actions = (0..<total).map { _ in RaceCell() }
            let lateStarts = Atomic<Int>(0)
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
                            disposable.dispose()
                            _ = actions[id].mark.compareExchange(expected: 0, desired: 2, ordering: .acquiringAndReleasing)
                        }
                    }
                }
                // From this thread, not after the hop back: the driver spins until told, however long
                // this task waits for a pool thread.
                stop.store(true, ordering: .releasing)
            }
            await driver?.value
            let kept = (0..<total).filter { !isDisposed($0) }
            let allRan = await harness.eventually { kept.allSatisfy { actions[$0].runs.load(ordering: .relaxed) >= 1 } }
            #expect(allRan, "an action that was not disposed never ran")
            // Give a wrongly kept disposed action the time to start late.
            await harness.letTimePass(.milliseconds(5))
            let ranTwice = (0..<total).filter { actions[$0].runs.load(ordering: .relaxed) > 1 }
            #expect(ranTwice.isEmpty, "actions ran more than once: \(ranTwice.prefix(10))")
            let lateStartsValue = lateStarts.load(ordering: .relaxed)
            #expect(lateStartsValue == 0, "\(lateStartsValue) actions started after dispose() returned")
        }
    }

    @Test(
        "A captured object is released promptly once its action is disposed from another thread",
        arguments: SchedulerKind.deferred
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
