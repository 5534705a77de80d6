import Foundation
import Scheduling
import Synchronization
import Testing

/// What stays outside virtual time inside the scope, and how it shows.
@Suite("drive and real time")
struct RealTimeTests {
    @Test("A plain Task.sleep in a taken-in task sleeps in real time: the stall names it, the wake-up is counted")
    func plainTaskSleep() async throws {
        let test = TestScheduler()
        let finished = Shared(false)
        let stall: TestSchedulerStall
        do {
            try await test.drive {
                await Task {
                    try? await Task.sleep(for: .milliseconds(20))  // real time: no hook sees its wake-up
                    finished.withLock { $0 = true }
                }.value
            }
            Issue.record("drive returned: the real-time sleep was not seen as real")
            return
        } catch let error as TestSchedulerStall {
            stall = error
        }
        #expect(!stall.bodyEndedWhenCancelled, "the body waits on a task drive does not cancel")
        #expect(stall.description.contains("Task.sleep"))
        #expect(test.outsideWakeUpCount == 0)
        // The wake-up comes from a Dispatch thread after 20 ms of real time; it puts the task's job
        // on the test scheduler. Waiting for real time is what this test is about.
        let deadline = ContinuousClock.now.advanced(by: .seconds(10))
        while test.outsideWakeUpCount == 0 && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(5))
        }
        #expect(test.outsideWakeUpCount == 1)
        #expect(!finished.withLock { $0 }, "the job waits on the scheduler until it is advanced")
        test.advance()
        #expect(finished.withLock { $0 })
    }

    @Test("Outside drive nothing is taken in: a task the test starts itself stays on the pool")
    func outsideTheScope() async throws {
        let test = TestScheduler()
        try await test.drive {}  // a scope exists for this scheduler
        let member = await Task { TaskCapture.isTakenIn(GlobalEnqueueHook.currentTaskID) }.value
        #expect(!member)
        #expect(test.takenInTaskCount == 0)
    }
}

@Suite("The global-enqueue hook")
struct HookTests {
    @Test("drive installs the hook once; it stays in the slot and passes other jobs on")
    func installed() async throws {
        let test = TestScheduler()
        try await test.drive {}
        #expect(GlobalEnqueueHook.isInSlot)
        // A plain task outside any scope still runs, on the pool: the hook passed its jobs on.
        let ran = await Task.detached { Schedulers.current == nil }.value
        #expect(ran)
    }
}
