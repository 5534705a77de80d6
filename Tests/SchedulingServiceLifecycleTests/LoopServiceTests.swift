#if ServiceLifecycle
import Foundation
import LoopScheduling
import LoopSchedulingTestSupport
import Scheduling
import Synchronization
import SchedulingServiceLifecycle
import ServiceLifecycle
import Testing

/// LoopScheduler and LoopSchedulerGroup as services of a real `ServiceGroup`.
@Suite("Loop services", .timeLimit(.minutes(10)))  // a hang guard, not a speed check: loaded runs took over 3 min
struct LoopServiceTests {
    /// After the service returned: new work refused, accepted work ran, timers disposed.
    static func expectShutDown(_ probe: ShutdownProbe, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(refusesWork(probe.loop), "scheduling after run() returns an already-disposed disposable", sourceLocation: sourceLocation)
        #expect(probe.ranAcceptedTask, "a task accepted before shutdown ran", sourceLocation: sourceLocation)
        #expect(probe.disposedTimer, "a pending timer was disposed without running", sourceLocation: sourceLocation)
    }

    @Test("Graceful shutdown of the group shuts a LoopScheduler down")
    func gracefulShutdownScheduler() async throws {
        let loop = try LoopScheduler(name: "svc-graceful")
        let probe = ShutdownProbe(loop)
        let group = ServiceGroup(services: [loop], logger: quietLogger)
        let running = Task { try await group.run() }
        #expect(!refusesWork(loop), "the loop serves while its service runs")
        await group.triggerGracefulShutdown()
        try await running.value
        Self.expectShutDown(probe)
    }

    @Test("Graceful shutdown of the group shuts every loop of a LoopSchedulerGroup down")
    func gracefulShutdownGroup() async throws {
        let loops = try LoopSchedulerGroup(count: 2, name: "svc-group")
        let probes = loops.schedulers.map(ShutdownProbe.init)
        let group = ServiceGroup(services: [loops], logger: quietLogger)
        let running = Task { try await group.run() }
        await group.triggerGracefulShutdown()
        try await running.value
        for probe in probes { Self.expectShutDown(probe) }
    }

    @Test("Cancelling the task that runs the group shuts the loops down")
    func cancellation() async throws {
        let loops = try LoopSchedulerGroup(count: 2, name: "svc-cancel")
        let probes = loops.schedulers.map(ShutdownProbe.init)
        let group = ServiceGroup(services: [loops], logger: quietLogger)
        let running = Task { try await group.run() }
        running.cancel()
        _ = try? await running.value
        for probe in probes { Self.expectShutDown(probe) }
    }

    @Test("A service beside the loops that fails ends the group, and the loops shut down")
    func failingNeighbour() async throws {
        let loop = try LoopScheduler(name: "svc-failing")
        let probe = ShutdownProbe(loop)
        let trigger = Signal()
        let group = ServiceGroup(services: [loop, FailingService(trigger: trigger.wait)], logger: quietLogger)
        let running = Task { try await group.run() }
        #expect(!refusesWork(loop))
        trigger.fire()
        await #expect(throws: FailingService.Failure.self) { try await running.value }
        Self.expectShutDown(probe)
    }

    @Test("Outside a service group, run() returns when its task is cancelled")
    func cancellationWithoutGroup() async throws {
        let loop = try LoopScheduler(name: "svc-bare")
        let probe = ShutdownProbe(loop)
        let running = Task { try await loop.run() }
        #expect(!refusesWork(loop))
        running.cancel()
        try await running.value
        Self.expectShutDown(probe)
    }

    @Test("A second run() throws, after the first returned")
    func secondRunThrows() async throws {
        let loop = try LoopScheduler(name: "svc-twice")
        let loops = try LoopSchedulerGroup(count: 1, name: "svc-twice-group")
        for service in [loop, loops] as [any Service] {
            let first = Task { try await service.run() }
            first.cancel()
            try await first.value
            await #expect(throws: ServiceAlreadyRunError.self) { try await service.run() }
        }
        let error = await #expect(throws: ServiceAlreadyRunError.self) { try await loop.run() }
        #expect(error?.service == "LoopScheduler \"svc-twice\"")
        #expect(error?.description.contains("svc-twice") == true)
    }

    @Test("Of two concurrent run() calls, one throws at once and the other runs")
    func concurrentRuns() async throws {
        let loop = try LoopScheduler(name: "svc-race")
        let probe = ShutdownProbe(loop)
        try await withThrowingTaskGroup(of: Void.self) { runs in
            runs.addTask { try await loop.run() }
            runs.addTask { try await loop.run() }
            // The winner waits for cancellation; the loser is the first to finish.
            await #expect(throws: ServiceAlreadyRunError.self) { try await runs.next() }
            #expect(!refusesWork(loop), "the loser did not touch the loop")
            runs.cancelAll()
            try await runs.waitForAll()
        }
        Self.expectShutDown(probe)
    }

    @Test("shutdown() from another thread ends run(), outside a service group")
    func shutdownElsewhereEndsRun() async throws {
        let loop = try LoopScheduler(name: "svc-elsewhere")
        let probe = ShutdownProbe(loop)
        let running = Task { try await loop.run() }
        #expect(!refusesWork(loop))
        Thread.detachNewThread { loop.syncShutdown() }
        try await ended(running)
        Self.expectShutDown(probe)
        // The claim stays: the ended service does not run again.
        await #expect(throws: ServiceAlreadyRunError.self) { try await loop.run() }
    }

    @Test("shutdown() from another thread ends the loop's service, and so a ServiceGroup")
    func shutdownElsewhereEndsGroup() async throws {
        let loop = try LoopScheduler(name: "svc-elsewhere-group")
        let probe = ShutdownProbe(loop)
        let group = ServiceGroup(services: [loop], logger: quietLogger)
        let running = Task { try await group.run() }
        Thread.detachNewThread { loop.syncShutdown() }
        // The default successTerminationBehavior (`.cancelGroup`) reports the early end.
        await #expect(throws: ServiceGroupError.self) { try await ended(running) }
        Self.expectShutDown(probe)
    }

    @Test("A LoopSchedulerGroup's run() ends once every loop of it was shut down elsewhere, not before")
    func groupEndsWhenEveryLoopClosed() async throws {
        let loops = try LoopSchedulerGroup(count: 2, name: "svc-elsewhere-loops")
        let probes = loops.schedulers.map(ShutdownProbe.init)
        // run() on virtual time: its jobs run only inside `advance()`, on this thread, so once an
        // `advance()` returns the service has done all it would do in answer to what happened so far.
        let test = TestScheduler()
        let returned = Atomic<Bool>(false)
        let running = Task(executorPreference: test) {
            try await loops.run()
            returned.store(true, ordering: .releasing)
        }
        test.advance()  // run() waits for the first loop to close
        // The first loop's close resumes run() before this shutdown returns (its wait came first).
        await loops.schedulers[0].shutdown()
        test.advance()
        let ranOn = !refusesWork(loops.schedulers[1])
        #expect(ranOn, "run() shut the other loop down once the first one closed")
        let returnedEarly = returned.load(ordering: .acquiring)
        #expect(!returnedEarly, "run() returned while a loop of its group still ran")
        Thread.detachNewThread { loops.schedulers[1].syncShutdown() }
        let returnedAtLast = await eventually {
            test.advance()
            return returned.load(ordering: .acquiring)
        }
        #expect(returnedAtLast, "run() did not return once the last loop closed")
        try await ended(running)
        for probe in probes { Self.expectShutDown(probe) }
    }
}
#endif
