import Foundation
import LoopSchedulingTestSupport
import Scheduling
import Synchronization
import Testing

@testable import LoopEngine
@testable import LoopScheduling

/// Rule 3 with rule 13: a timer pushed back by another thread while it waits in the heap keeps its
/// place by its new deadline, also when both deadlines have passed by the time the loop fires.
@Suite("Re-arm keeps deadline order among due timers")
struct RearmOrderTests {
    @Test("A timer pushed back from another thread, overdue at both deadlines, fires after a timer due between them")
    func pushedBackOverdueKeepsOrder() async throws {
        let clock = SteppableClock()
        let start = Nanoseconds.monotonicNow()
        clock.freezeMonotonic(at: start)
        let loop = try LoopScheduler(name: "rearm-order", clock: clock)
        await shuttingDown(loop) {
            let order = LockedValue<[String]>([])
            let pushed = loop.scheduleRearmable(after: .milliseconds(50)) { order.withLock { $0.append("pushed") } }
            loop.schedule(after: .milliseconds(60)) { order.withLock { $0.append("between") } }
            // Just short of the first deadline: the pushed timer waits in the heap, filed by 50 ms.
            // The loop moves it from the wheel to the heap before it next sleeps; a loop that
            // drained the scheduling and the look in one batch has not slept yet, so look again.
            clock.freezeMonotonic(at: start + 49_900_000)
            let inHeap = await eventually { await onLoop(loop) { (pushed as! LoopTimer).heapIndex } >= 0 }
            #expect(inHeap, "the timer is not in the heap")
            // From another thread, to 80 ms: later, so written in place and not queued.
            #expect(await onOwnThread { pushed.rearm(after: .microseconds(30_100)) })
            // Both 50 ms and 80 ms have passed, and so has the timer due at 60 ms between them.
            clock.freezeMonotonic(at: start + 100_000_000)
            let probe = Atomic<Bool>(false)
            loop.schedule(after: .zero) { probe.store(true, ordering: .releasing) }
            #expect(await eventually { probe.load(ordering: .acquiring) })
            #expect(order.withLock { $0 } == ["between", "pushed"])
        }
    }
}
