import Scheduling
import Testing

@testable import LoopEngine
@testable import LoopScheduling

/// ``LoopWakeRule``, the one place that decides which submission from another thread wakes the
/// loop: its table on its own, then through the remote queue that keeps it under its lock.
@Suite("The loop's wake rule")
struct LoopWakeRuleTests {
    private static func timer(_ deadline: Int64, wall: Bool = false) -> LoopTimer {
        LoopTimer(core: nil, deadline: deadline, isWall: wall, action: nil)
    }

    @Test("The table: tasks and jobs wake; timers and re-arms wait when the promise covers them; cancellations wait or ask for a flush")
    func table() {
        let armedAt: Int64 = 1_000_000_000
        let awake = LoopPromise.awake
        let flushing = LoopPromise(armedDeadline: armedAt, isFlushing: true)
        let armed = LoopPromise(armedDeadline: armedAt, isFlushing: false)
        let idle = LoopPromise.idle
        func need(_ item: LoopItem, _ promise: LoopPromise) -> LoopWakeRule.Need {
            LoopWakeRule.need(of: item, promise)
        }
        for promise in [awake, flushing, armed, idle] {
            #expect(need(.task(LoopWork(action: {})), promise) == .wake)
        }
        for make in [LoopItem.timer, LoopItem.rearmed] {
            #expect(need(make(Self.timer(0)), awake) == .nothing)
            #expect(need(make(Self.timer(armedAt)), flushing) == .nothing)
            #expect(need(make(Self.timer(armedAt - 1)), flushing) == .wake)  // due before the look
            #expect(need(make(Self.timer(armedAt)), armed) == .flush)
            #expect(need(make(Self.timer(armedAt - 1)), armed) == .wake)
            #expect(need(make(Self.timer(.max)), idle) == .flush)
            #expect(need(make(Self.timer(5 * armedAt, wall: true)), flushing) == .wake)  // wall: re-converted
        }
        #expect(need(.cancelled(Self.timer(0)), flushing) == .nothing)
        #expect(need(.cancelled(Self.timer(0)), armed) == .flush)
        #expect(need(.cancelled(Self.timer(0)), idle) == .flush)
    }

    @Test("The bookkeeping: one wake-up until the loop takes the queue; stragglers ask for flushing; the bound")
    func bookkeeping() {
        var rule = LoopWakeRule()
        /// Admits `item`: whether it sent a wake-up.
        func admit(_ item: LoopItem) -> Bool { rule.admit(item) }
        func took() -> Bool { rule.loopTookQueue() }
        func wakeForShutdown() -> Bool { rule.wakeUnlessPending() }
        rule.promise = LoopPromise(armedDeadline: 1_000, isFlushing: true)
        #expect(!admit(.cancelled(Self.timer(0))))
        #expect(rule.stragglers)
        #expect(admit(.task(LoopWork(action: {}))))
        #expect(!admit(.task(LoopWork(action: {}))))  // a wake-up is pending
        #expect(took())
        #expect(!rule.wakePending && rule.deferred == 0 && !rule.stragglers && rule.promise.isAwake)
        // Awake: waiting items are no stragglers (the loop looks before it blocks).
        #expect(!admit(.timer(Self.timer(0))))
        #expect(!rule.stragglers)
        #expect(!took())
        rule.promise = LoopPromise(armedDeadline: 1_000, isFlushing: true)
        for _ in 0..<(LoopWakeRule.deferredLimit - 1) { #expect(!admit(.cancelled(Self.timer(0)))) }
        #expect(admit(.cancelled(Self.timer(0))))
        #expect(!wakeForShutdown())
        _ = took()
        #expect(wakeForShutdown())
    }

    @Test("The remote queue's wake-up decisions: which items wake the loop, ask it to flush, or wait, and the bound")
    func wakeDecisions() {
        let queue = RemoteQueue()
        let wakes = WakeCounter()
        queue.setWaker(wakes)
        queue.lifecycle.started()
        func submit(_ item: LoopItem) {
            #expect(queue.submit(item))
        }
        func take() -> (items: Int, stragglers: Bool) {
            var batch: [LoopItem] = []
            let stragglers = queue.take(into: &batch)
            return (batch.count, stragglers)
        }
        func publish(_ promise: LoopPromise) {
            var batch: [LoopItem] = []
            #expect(!queue.publish(promise, orTakeInto: &batch))
        }
        func timer(_ deadline: Int64, wall: Bool = false) -> LoopTimer { Self.timer(deadline, wall: wall) }
        let armedAt: Int64 = 1_000_000_000

        // Not flushing: a covered timer or a cancellation wakes the loop and asks for flushing.
        publish(.init(armedDeadline: armedAt, isFlushing: false))
        submit(.cancelled(timer(5 * armedAt)))
        #expect(wakes.count == 1)
        #expect(take() == (1, true))
        publish(.init(armedDeadline: armedAt, isFlushing: false))
        submit(.timer(timer(armedAt)))
        #expect(wakes.count == 2)
        #expect(take() == (1, true))

        // Flushing: covered timers and cancellations (any kind) wait; the rest wake, not flush.
        publish(.init(armedDeadline: armedAt, isFlushing: true))
        submit(.timer(timer(armedAt)))
        submit(.cancelled(timer(armedAt + 1)))
        submit(.cancelled(PeriodicLoopTimer(core: nil, deadline: 0, isWall: false, interval: 1, leeway: 0) { _ in }))
        #expect(wakes.count == 2)
        submit(.timer(timer(armedAt - 1)))
        #expect(wakes.count == 3)
        // Queued behind a pending wake-up: nothing more to send.
        submit(.task(LoopWork(action: {})))
        #expect(wakes.count == 3)
        #expect(take() == (5, true))
        for item in [LoopItem.timer(timer(2 * armedAt, wall: true)), .task(LoopWork(action: {}))] {
            publish(.init(armedDeadline: armedAt, isFlushing: true))
            let before = wakes.count
            submit(item)
            #expect(wakes.count == before + 1)
            #expect(take().stragglers == false)
        }

        // Awake: timers and cancellations wait for the loop's look before it blocks; no flushing.
        _ = take()
        let before = wakes.count
        submit(.timer(timer(0)))
        submit(.cancelled(timer(0)))
        #expect(wakes.count == before)
        var batch: [LoopItem] = []
        #expect(queue.publish(.init(armedDeadline: armedAt, isFlushing: true), orTakeInto: &batch))
        #expect(batch.count == 2)

        // The bound: the deferredLimit-th item in a row left without a wake-up wakes the loop.
        publish(.init(armedDeadline: armedAt, isFlushing: true))
        let start = wakes.count
        for _ in 0..<(LoopWakeRule.deferredLimit - 1) { submit(.cancelled(timer(2 * armedAt))) }
        #expect(wakes.count == start)
        submit(.cancelled(timer(2 * armedAt)))
        #expect(wakes.count == start + 1)
        #expect(take() == (LoopWakeRule.deferredLimit, true))
    }

}
