import Dispatch
import Foundation
import Scheduling
import Synchronization
import Testing

/// Races between disposal and execution. `make test` runs this suite again under the thread
/// sanitizer.
@Suite("Races")
struct Races {
    @Test("Disposing from 8 threads at once runs the dispose action exactly once")
    func disposeFromEightThreads() {
        for _ in 0..<200 {
            let runs = Atomic<Int>(0)
            let disposable = ActionDisposable { runs.add(1, ordering: .relaxed) }
            DispatchQueue.concurrentPerform(iterations: 8) { _ in disposable.dispose() }
            let runsValue = runs.load(ordering: .relaxed)
            #expect(runsValue == 1)
            #expect(disposable.isDisposed)
        }
    }

    @Test("Disposing scheduled work from 8 threads at once is safe", arguments: SchedulerKind.deferred)
    func disposeScheduledFromEightThreads(kind: SchedulerKind) throws {
        try Harness.with(kind) { harness in
            for _ in 0..<50 {
                let disposable = harness.dateScheduler.schedule(after: .seconds(10)) {}
                DispatchQueue.concurrentPerform(iterations: 8) { _ in disposable.dispose() }
                #expect(disposable.isDisposed)
            }
        }
    }

    @Test("No action starts after dispose() returned, while actions fire", arguments: SchedulerKind.deferred)
    func noStartAfterDispose(kind: SchedulerKind) throws {
        guard !kind.isVirtual else { return }  // virtual time has no concurrent firing
        try Harness.with(kind) { harness in
            let violations = Atomic<Int>(0)
            let finished = Atomic<Int>(0)
            let total = 2000
            let log = Recorder<Int>(harness)
            DispatchQueue.concurrentPerform(iterations: 4) { worker in
                for index in 0..<(total / 4) {
                    let disposedFlag = Atomic<Bool>(false)
                    let disposable = harness.dateScheduler.schedule(after: .microseconds(index % 3 * 50)) {
                        if disposedFlag.load(ordering: .acquiring) { violations.add(1, ordering: .relaxed) }
                    }
                    if (index + worker) % 2 == 0 {
                        disposable.dispose()
                        disposedFlag.store(true, ordering: .releasing)
                    }
                    finished.add(1, ordering: .relaxed)
                }
            }
            harness.scheduler.schedule { log.append(1) }
            #expect(log.wait(for: 1))
            harness.letTimePass(.milliseconds(5))
            let finishedValue = finished.load(ordering: .relaxed)
            #expect(finishedValue == total)
            let violationsValue = violations.load(ordering: .relaxed)
            #expect(violationsValue == 0, "an action started after dispose() returned")
        }
    }

    @Test(
        "A captured object is released promptly once its action is disposed from another thread",
        arguments: SchedulerKind.deferred
    )
    func capturedReleasedAfterRemoteDispose(kind: SchedulerKind) throws {
        try Harness.with(kind) { harness in
            var tracked: Tracked? = Tracked()
            let weak = WeakBox(tracked!)
            let disposable = harness.dateScheduler.schedule(after: .seconds(60)) { [tracked] in _ = tracked }
            tracked = nil
            let done = DispatchSemaphore(value: 0)
            Thread.detachNewThread {
                disposable.dispose()
                done.signal()
            }
            done.wait()
            #expect(harness.waitUntil(timeout: .seconds(5)) { weak.isNil })
        }
    }
}
