import Foundation
import Scheduling
import Synchronization
import Testing

/// What stays outside virtual time inside the scope, and how it shows.
@Suite("drive and real time")
struct RealTimeTests {
    @Test("A plain Task.sleep in a taken-in task sleeps in real time: the stall names it, the wake-up is counted")
    func plainTaskSleep() async throws {
        // The sleep's wake-up comes from a Dispatch thread once its real time has passed. Whether
        // that is after `drive` returned is up to the machine: an attempt where it came before
        // proves nothing, and runs again with a sleep ten times as long. Every check is made on an
        // attempt where it came after (no wake-up counted when drive returned), so a loaded
        // machine costs attempts, never a wrong verdict.
        for sleep: Duration in [.milliseconds(20), .milliseconds(200), .seconds(2), .seconds(20)] {
            let test = TestScheduler()
            let finished = Shared(false)
            var stall: TestSchedulerStall?
            do {
                try await test.drive {
                    await Task {
                        try? await Task.sleep(for: sleep)  // real time: no hook sees its wake-up
                        finished.withLock { $0 = true }
                    }.value
                }
            } catch let error as TestSchedulerStall {
                stall = error
            }
            let wokenDuringDrive = test.outsideWakeUpCount != 0 || finished.withLock { $0 }
            // Waiting for real time is what this test is about: the wake-up puts the task's job on
            // the test scheduler (the bound is for a hang only).
            let deadline = ContinuousClock.now.advanced(by: .seconds(60))
            while test.outsideWakeUpCount == 0 && !finished.withLock({ $0 }) && ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(5))
            }
            guard let stall, !wokenDuringDrive else {
                test.advance()  // an attempt that proves nothing: let its task end
                continue
            }
            #expect(!stall.bodyEndedWhenCancelled, "the body waits on a task drive does not cancel")
            #expect(stall.description.contains("Task.sleep"))
            #expect(test.outsideWakeUpCount == 1)
            #expect(!finished.withLock { $0 }, "the job waits on the scheduler until it is advanced")
            test.advance()
            #expect(finished.withLock { $0 })
            return
        }
        Issue.record("in every attempt the real-time wake-up came before drive returned")
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

    @Test("A foreign hook is named where the dynamic loader knows it: an exported C function, a demangled Swift one")
    func symbolNames() throws {
        let cFunction = try #require(GlobalEnqueueHook.address(ofExported: "swift_task_enqueueGlobal"))
        let cName = try #require(GlobalEnqueueHook.symbol(at: cFunction))
        #expect(cName.hasPrefix("swift_task_enqueueGlobal in libswift_Concurrency"), "\(cName)")
        let swiftFunction = try #require(GlobalEnqueueHook.address(ofExported: "$sSS5countSivg"))
        let swiftName = try #require(GlobalEnqueueHook.symbol(at: swiftFunction))
        #expect(swiftName.hasPrefix("Swift.String.count.getter : Swift.Int in libswiftCore"), "\(swiftName)")
    }
}
