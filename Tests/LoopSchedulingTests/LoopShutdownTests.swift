import Dispatch
import Foundation
import Scheduling
import Synchronization
import Testing

@testable import LoopEngine
@testable import LoopScheduling
import LoopSchedulingTestSupport

/// Shutdown by dropping the last reference, shutdown across loops, and adopting a loop from
/// another thread (issue 7, defects 3 and 4 and the adopted-mode finding).
@Suite("LoopScheduler shutdown", .timeLimit(.minutes(10)))  // a hang guard, not a speed check: loaded runs took over 3 min
struct LoopShutdownTests {
    @Test("Dropping the last reference while the loop is mid-batch waits: every accepted task runs")
    func dropMidBatchWaits() async throws {
        let count = 100_000
        // Dropping the last reference off the loop thread waits for the loop to close, as
        // shutdown() does: a thread made for it.
        let ranBeforeReturn = try await onOwnThread { () throws -> Int in
            let ran = Atomic<Int>(0)
            let gate = DispatchSemaphore(value: 0)
            let blocked = DispatchSemaphore(value: 0)
            var loop: LoopScheduler? = try LoopScheduler(name: "drop")
            loop!.schedule {
                blocked.signal()
                gate.wait()
            }
            blocked.wait()  // the loop is inside a batch now, with the scheduler current
            for _ in 0..<count { loop!.schedule { ran.add(1, ordering: .relaxed) } }
            // Lifted from elsewhere once this thread is about to drop the reference; however late,
            // the drop must wait for it.
            DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(50)) { gate.signal() }
            loop = nil  // the last reference: deinit runs here and waits for the loop to close
            return ran.load(ordering: .relaxed)
        }
        #expect(ranBeforeReturn == count, "dropping the last reference returned before accepted tasks ran")
    }

    @Test("Two loops shutting each other down from inside actions do not deadlock")
    func mutualShutdown() async throws {
        let first = try LoopScheduler(name: "mutual-a")
        let second = try LoopScheduler(name: "mutual-b")
        let returned = Atomic<Int>(0)
        for (loop, other) in [(first, second), (second, first)] {
            loop.schedule {
                other.syncShutdown()  // another loop's thread: begins and returns
                returned.add(1, ordering: .relaxed)
            }
        }
        #expect(await eventually(timeout: .seconds(30)) { returned.load(ordering: .relaxed) == 2 }, "a loop blocked in another loop's shutdown")
        // shutdown() from a plain thread waits for the close: a thread made for it.
        await onOwnThread {
            first.syncShutdown()
            second.syncShutdown()
        }
        #expect(first.core.lifecycle.state == .closed && second.core.lifecycle.state == .closed)
        #expect(first.schedule {}.isDisposed && second.schedule {}.isDisposed)
    }

    @Test("Two loops of one group both calling group.syncShutdown() from inside actions do not deadlock")
    func groupShutdownFromItsLoops() async throws {
        let group = try LoopSchedulerGroup(count: 2, name: "selfstop")
        let returned = Atomic<Int>(0)
        for loop in group.schedulers {
            loop.schedule {
                group.syncShutdown()
                returned.add(1, ordering: .relaxed)
            }
        }
        #expect(await eventually(timeout: .seconds(30)) { returned.load(ordering: .relaxed) == 2 }, "group.syncShutdown() on a loop thread blocked")
        // A plain thread: waits for both to close and joins them. A thread made for it.
        await onOwnThread { group.syncShutdown() }
        #expect(group.schedulers.allSatisfy { $0.core.lifecycle.state == .closed })
    }

    @Test("shutdown() async returns once the loop is closed, without blocking the caller's thread")
    func asyncShutdown() async throws {
        let loop = try LoopScheduler(name: "async-stop")
        let ran = Atomic<Bool>(false)
        let timer = loop.schedule(after: .seconds(30)) {}
        loop.schedule { ran.store(true, ordering: .relaxed) }
        await loop.shutdown()
        let didRun = ran.load(ordering: .relaxed)
        #expect(didRun)
        #expect(timer.isDisposed)
        #expect(loop.core.lifecycle.state == .closed)
        await loop.shutdown()  // idempotent
    }

    @Test("The lifecycle moves only forward, and shutdown is idempotent")
    func lifecycleTransitions() async {
        let lifecycle = LoopLifecycle()
        var state = lifecycle.state
        var open = lifecycle.isOpen
        #expect(state == .starting && !open)
        lifecycle.started()
        open = lifecycle.isOpen
        #expect(open)
        let first = lifecycle.beginShutdown()
        let second = lifecycle.beginShutdown()
        #expect(first && !second)
        state = lifecycle.state
        #expect(state == .draining)
        lifecycle.beginClosing()
        let notified = Flag()
        lifecycle.whenClosed { notified.set() }
        #expect(!notified.isSet)
        lifecycle.didClose()
        #expect(notified.isSet)
        // A thread waiting on a closed lifecycle returns at once; a thread made for it, so a wait that
        // did block would not hold one of the pool's.
        let waitReturned = await onOwnThread { () -> Bool in
            let closed = LoopLifecycle()
            closed.started()
            _ = closed.beginShutdown()
            closed.beginClosing()
            closed.didClose()
            closed.waitUntilClosed()
            return true
        }
        #expect(waitReturned)
        let afterClose = lifecycle.beginShutdown()
        state = lifecycle.state
        #expect(!afterClose && state == .closed)
    }
}

/// The calling pthread, as a number.
func currentThreadID() -> UInt {
    UInt(bitPattern: Int(bitPattern: pthread_self()))
}

/// Records what a metrics delegate is told.
final class RecordingDelegate: LoopSchedulerMetricsDelegate {
    let infos = LockedValue<[LoopIterationInfo]>([])
    let offLoopCalls = Atomic<Int>(0)

    func loopIterationDidEnd(_ info: LoopIterationInfo) {
        if Schedulers.current != nil { offLoopCalls.add(1, ordering: .relaxed) }
        infos.withLock { $0.append(info) }
    }
}

@Suite("LoopScheduler metrics delegate")
struct LoopMetricsDelegateTests {
    @Test("The delegate hears every iteration: counts add up, time moves forward, sleep is measured")
    func iterations() async throws {
        let delegate = RecordingDelegate()
        let loop = try LoopScheduler(name: "metrics", metricsDelegate: delegate)
        let fired = Atomic<Int>(0)
        for _ in 0..<10 { loop.schedule {} }
        for index in 0..<5 { loop.schedule(after: .milliseconds(2 * (index + 1))) { fired.add(1, ordering: .relaxed) } }
        loop.schedule(after: .seconds(60)) {}.dispose()
        #expect(await eventually { fired.load(ordering: .relaxed) == 5 })
        // Let one more iteration end after the last fire, then stop.
        #expect(await eventually { delegate.infos.withLock { $0.reduce(0) { $0 + $1.timersFired } } == 5 })
        // With nothing left the loop blocks until woken: the iteration this task ends was asleep,
        // whatever the load (the timers above may all have found the loop late).
        loop.schedule {}
        #expect(await eventually { delegate.infos.withLock { $0.reduce(0) { $0 + $1.tasksRun } } == 11 })
        await loop.shutdown()
        let infos = delegate.infos.withLock { $0 }
        #expect(infos.allSatisfy { $0.loopName == "metrics" })
        #expect(infos.reduce(0) { $0 + $1.tasksRun } == 11)
        #expect(infos.reduce(0) { $0 + $1.disposedBeforeRun } == 1)
        #expect(zip(infos, infos.dropFirst()).allSatisfy { $1.end >= $0.end && $1.duration == $1.end - $0.end })
        #expect(infos.contains { ($0.sleepTime ?? .zero) > .zero }, "the loop slept while idle but no sleep was reported")
        #expect(infos.allSatisfy { $0.maxLateness <= $0.totalLateness || $0.timersFired <= 1 })
        #expect(delegate.offLoopCalls.load(ordering: .relaxed) == 0, "the delegate ran with a current scheduler")
    }
}
