import Foundation
import LoopSchedulingTestSupport
import Scheduling
import Synchronization
import Testing

@testable import LoopEngine
@testable import LoopScheduling

/// An actor that lives on a loop.
actor LoopBound {
    let loop: LoopScheduler
    var calls = 0

    init(loop: LoopScheduler) { self.loop = loop }

    nonisolated var unownedExecutor: UnownedSerialExecutor { loop.asUnownedSerialExecutor() }

    func call() -> (onLoop: Bool, current: Bool) {
        calls += 1
        return (loop.core.isOnLoopThread, Schedulers.current === loop)
    }

    func bump() { calls += 1 }

    func log(_ entry: String, into order: LockedValue<[String]>) { order.withLock { $0.append(entry) } }
}

@Suite("LoopScheduler as an executor")
struct LoopExecutorTests {
    @Test("An actor pinned to the loop runs its methods on the loop thread with the loop current")
    func actorOnLoop() async throws {
        let loop = try LoopScheduler(name: "actor")
        let bound = LoopBound(loop: loop)
        for _ in 0..<100 {
            let (onLoop, current) = await bound.call()
            #expect(onLoop && current)
        }
        #expect(await bound.calls == 100)
        await loop.shutdown()
    }

    @Test("Task(executorPreference:) runs nonisolated code on the loop thread with the loop current")
    func taskPreference() async throws {
        // How many enqueues a task costs is counted for every kind in the conformance suite (rule 10).
        let loop = try LoopScheduler(name: "preference")
        let onLoop = await Task(executorPreference: loop) {
            loop.core.isOnLoopThread && Schedulers.current === loop
        }.value
        #expect(onLoop)
        await loop.shutdown()
    }

    @Test("Jobs and schedule(_:) share one FIFO")
    func fifoWithSchedule() async throws {
        let loop = try LoopScheduler(name: "fifo-jobs")
        let bound = LoopBound(loop: loop)
        let order = LockedValue<[String]>([])
        let gate = SchedulerGate()
        await gate.hold(loop)  // hold the loop so everything below queues up
        loop.schedule { order.withLock { $0.append("task 1") } }
        let job = Task { await bound.log("job", into: order) }
        // The job is queued once the task reached the actor's executor: wait for that, not a sleep.
        #expect(await eventually { loop.core.remote.count == 2 })
        loop.schedule { order.withLock { $0.append("task 2") } }
        gate.letGo()
        await job.value
        #expect(await eventually { order.withLock { $0.count } == 3 })
        #expect(order.withLock { $0 } == ["task 1", "job", "task 2"])
        await loop.shutdown()
    }

    @Test("assumeIsolated works inside a plain action of the loop; isIsolatingCurrentContext is false elsewhere")
    func isolationChecks() async throws {
        let loop = try LoopScheduler(name: "isolated")
        let bound = LoopBound(loop: loop)
        let inside = await withCheckedContinuation { done in
            loop.schedule {
                bound.assumeIsolated { $0.calls += 1 }
                done.resume(returning: loop.isIsolatingCurrentContext())
            }
        }
        #expect(inside == true)
        #expect(loop.isIsolatingCurrentContext() == false)
        #expect(await bound.calls == 1)
        await loop.shutdown()
    }

    @Test("No task is stranded: jobs after the loop closed run on the fallback queue, in order, with no current scheduler")
    func noTaskStranded() async throws {
        let loop = try LoopScheduler(name: "stranded")
        let bound = LoopBound(loop: loop)
        await bound.bump()
        await loop.shutdown()
        for _ in 0..<100 { await bound.bump() }
        #expect(await bound.calls == 101)
        let current = await Task(executorPreference: loop) { Schedulers.current == nil && loop.isIsolatingCurrentContext() == true }.value
        #expect(current)
    }
}
