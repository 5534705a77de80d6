import LoopScheduling
import LoopSchedulingTestSupport
import Scheduling
@_spi(Workloads) import SchedulingWorkloads
import Testing

/// The Swift-concurrency task workloads (task-sleep, yield, spawn, and sleep-cancel started by a
/// ``TaskStarter``) at tiny counts: that each runs every operation where its starter put it, and
/// reports it. Waits only by awaiting; asserts no times.
@Suite("Task workloads")
struct TaskWorkloadTests {
    @Test("task-sleep on a loop with loop.sleep: every sleep returns, none early, the task stays on the loop")
    func taskSleepOnLoop() async throws {
        let loop = try LoopScheduler(name: "task-sleep")
        let run = try await onOwnThread {
            try Workloads.taskSleep(5, start: .preferring(loop), home: loop) { try await loop.sleep(for: $0) }
        }
        await loop.shutdown()
        #expect(run.completed == 5)
        #expect(run.lateness.count == 5)
        #expect(run.lateness.allSatisfy { $0 >= 0 })
        #expect(run.stayedHome)
    }

    @Test("task-sleep in a plain Task {} with Task.sleep: every sleep returns, none early")
    func taskSleepPlain() async {
        let run = await Workloads.sleepRepeatedly(3, interval: .milliseconds(1), home: nil) {
            try await Task.sleep(for: $0)
        }
        #expect(run.completed == 3)
        #expect(run.lateness.allSatisfy { $0 >= 0 })
        #expect(run.stayedHome)
    }

    @Test(
        "yield and spawn run every operation, on a loop and in plain tasks, the task staying where it started",
        arguments: [false, true]
    )
    func yieldAndSpawn(spawning: Bool) async throws {
        let loop = try LoopScheduler(name: "yield-spawn")
        let starts: [(any TaskStarter, (any Scheduler)?)] = [
            (PreferringTaskStarter(loop), loop), (PlainTaskStarter(), nil),
        ]
        let runs = try await onOwnThread {
            // 25 children in batches of 10: the last batch is a partial one.
            try starts.map { start, home in
                spawning
                    ? try Workloads.spawn(25, batch: 10, start: start, home: home)
                    : try Workloads.yield(25, start: start, home: home)
            }
        }
        await loop.shutdown()
        for run in runs {
            #expect(run.completed == 25)
            #expect(run.stayedHome)
        }
    }

    @Test("sleep-cancel in tasks preferring a loop: every sleep cancelled, none returned normally")
    func sleepCancelPreferringLoop() async throws {
        let loop = try LoopScheduler(name: "task-sleep-cancel")
        let run = try await onOwnThread {
            try Workloads.sleepCancel(
                20,
                start: .preferring(loop),
                sleep: { try await loop.sleep(for: .seconds(3600)) },
                settle: { AsyncBridge.roundTripAndIteration(loop) },
                iterations: { loop.statistics.loopIterations }
            )
        }
        await loop.shutdown()
        #expect(run.failedOperations == 0)
    }
}
