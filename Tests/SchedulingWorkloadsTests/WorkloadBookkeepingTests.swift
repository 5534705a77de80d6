import LoopScheduling
import LoopSchedulingTestSupport
import Scheduling
@_spi(Workloads) import SchedulingWorkloads
import Testing

@Suite("Workload bookkeeping")
struct WorkloadBookkeepingTests {
    @Test("timers-cancel cancels every timer it scheduled once, in the order it was given")
    func timersCancelOrder() {
        let system = RecordingSystem()
        let run = Workloads.timersCancel(system, order: [2, 0, 3, 1], harness: .benchmarks)
        #expect(system.scheduled == 4)
        #expect(system.cancelled == [2, 0, 3, 1])
        #expect(run.peakBytes == 0)
    }

    @Test("timers-cancel counts the cancellations the system does not confirm")
    func timersCancelUnconfirmed() {
        #expect(Workloads.timersCancel(RecordingSystem(), order: [1, 0, 2], harness: .benchmarks).unconfirmed == 0)
        let forgetful = RecordingSystem(confirmsCancellations: false)
        #expect(Workloads.timersCancel(forgetful, order: [1, 0, 2], harness: .benchmarks).unconfirmed == 3)
    }

    @Test("lateness counts a timer that never fired and the fires beyond one per timer")
    func latenessCountsMissingAndExtraFires() throws {
        let burst = TimerBurst(delays: [0, 0, 0])
        // As many fires as timers, one of them twice: the one that never fired is missing.
        let twice = try burst.lateness(on: RecordingSystem(firings: [2, 0, 1]))
        #expect(twice.missing == 1)
        #expect(twice.extra == 0)
        #expect(twice.early == 0)
        let thrice = try burst.lateness(on: RecordingSystem(firings: [3, 0, 1]))
        #expect(thrice.missing == 1)
        #expect(thrice.extra == 1)
        let once = try burst.lateness(on: RecordingSystem(firings: [1, 1, 1]))
        #expect(once.missing == 0)
        #expect(once.extra == 0)
        #expect(once.afterBurst.isEmpty)
    }

    @Test("timers-fire counts the fires beyond one per timer")
    func timersFireCountsExtraFires() throws {
        let burst = TimerBurst(delays: [0, 0, 0])
        #expect(try burst.fire(on: RecordingSystem(firings: [1, 2, 1])).extra == 1)
        #expect(try burst.fire(on: RecordingSystem(firings: [1, 1, 1])).extra == 0)
    }

    @Test("pending-memory cancels every timer it left pending once")
    func pendingMemoryCancelsAll() {
        let system = RecordingSystem()
        _ = Workloads.pendingMemory(system, 5, harness: .benchmarks)
        #expect(system.scheduled == 5)
        #expect(system.cancelled == [0, 1, 2, 3, 4])
    }

    @Test("pending-memory's handler timers are all cancelled again, and none fires")
    func pendingHandlerMemoryCancelsAll() async throws {
        let loop = try LoopScheduler(name: "handler-memory")
        let strayFires = Tally()
        let pending = await onOwnThread {
            let system = SchedulerSystem(loop: loop)
            _ = Workloads.pendingHandlerMemory(system, 1_000, harness: .benchmarks, strayFires: strayFires)
            // The statistics the loop publishes once the iteration that took the cancellations ends.
            AsyncBridge.roundTripAndIteration(loop)
            return loop.statistics.timersPending
        }
        await loop.shutdown()
        #expect(pending == 0)
        #expect(strayFires.count == 0)
    }

    @Test("loopsched's harness counts a timer that fires although it was meant to be cancelled")
    func strayFiresCounted() {
        let system = RecordingSystem()
        let strayFires = Tally()
        _ = Workloads.timersCancel(system, order: [1, 0, 2], harness: .loopsched.countingStrayFires(in: strayFires))
        #expect(strayFires.count == 0)
        system.fireAll()
        #expect(strayFires.count == 3)
    }

    @Test("timeouts-churn FIFO cancels the oldest timeout each time, and every timeout once")
    func churnFIFO() {
        var generator = ScriptedGenerator(values: [0])
        let (armed, cancelled) = churn(pending: 4, random: false, operations: 10, &generator)
        #expect(armed == 14)
        #expect(Array(cancelled.prefix(10)) == Array(0..<10))
        #expect(cancelled.sorted() == Array(0..<14))
        #expect(generator.drawn == 0)
    }

    @Test("timeouts-churn random cancels the slot the generator draws, and every timeout once")
    func churnRandom() {
        // Slots 2, 1, 1 (7 % 3), 0 of a ring of three holding timeouts 0, 1, 2.
        var generator = ScriptedGenerator(values: [2, 1, 7, 0])
        let (armed, cancelled) = churn(pending: 3, random: true, operations: 4, &generator)
        #expect(armed == 7)
        // Slot 2 held 2 (then 3), slot 1 held 1 (then 4, then 5), slot 0 held 0 (then 6).
        #expect(Array(cancelled.prefix(4)) == [2, 1, 4, 0])
        #expect(cancelled.sorted() == Array(0..<7))
        #expect(generator.drawn == 4)
    }

    /// Runs the churn with timeouts numbered as they are armed: how many were armed, and the
    /// numbers cancelled, in order.
    private func churn(
        pending: Int,
        random: Bool,
        operations: Int,
        _ generator: inout ScriptedGenerator
    ) -> (armed: Int, cancelled: [Int]) {
        var armed = 0
        var cancelled: [Int] = []
        _ = Workloads.churn(
            pending: pending,
            random: random,
            generator: &generator,
            operations: operations,
            arm: {
                defer { armed += 1 }
                return armed
            },
            cancel: { cancelled.append($0) }
        )
        return (armed, cancelled)
    }
}
