import Dispatch
import Scheduling
import Synchronization
import Testing

@testable import LoopScheduling

/// Entry reuse (issue 9): entries the caller dropped are reused on the loop thread; entries anyone
/// still holds — strongly, weakly or unowned — never are.
@Suite("LoopScheduler entry reuse")
struct LoopRecyclingTests {
    final class WeakBox: @unchecked Sendable {
        // Written and read on the loop thread only.
        weak var disposable: (any Disposable)?
    }

    @Test("Dropped task and timer entries are reused; held ones keep their identity and state")
    func reuse() throws {
        let loop = try LoopScheduler(name: "reuse")
        defer { loop.shutdown() }
        // A batch of dropped tasks fills the spare list once they ran.
        onLoop(loop) { for _ in 0..<10 { loop.schedule {} } }
        let observed = onLoop(loop) { () -> (Int, Int) in
            (loop.core.confined.spareTasks.count, loop.core.confined.spareTimers.count)
        }
        #expect(observed.0 >= 10, "dropped task entries were not kept for reuse")
        // A held disposable is never reused: after it ran, it still reports its own state.
        let held = onLoop(loop) { loop.schedule {} }
        _ = onLoop(loop) { 0 }
        #expect(!held.isDisposed)
        let spareIdentities = onLoop(loop) { loop.core.confined.spareTasks.map { ObjectIdentifier($0) } }
        #expect(!spareIdentities.contains(ObjectIdentifier(held)), "an entry the caller holds was put up for reuse")
        // A weakly held one is not reused either: the weak reference becomes nil.
        let box = WeakBox()
        onLoop(loop) { box.disposable = loop.schedule {} }
        _ = onLoop(loop) { 0 }
        let weakGone = onLoop(loop) { box.disposable == nil }
        #expect(weakGone, "an entry held weakly was kept alive for reuse")
        // Fired one-shot timers that were dropped are reused as well.
        let fired = DispatchSemaphore(value: 0)
        onLoop(loop) { for _ in 0..<5 { loop.schedule(after: .zero) { fired.signal() } } }
        for _ in 0..<5 { fired.wait() }
        _ = onLoop(loop) { 0 }
        let spareTimers = onLoop(loop) { loop.core.confined.spareTimers.count }
        #expect(spareTimers >= 5, "dropped fired timer entries were not kept for reuse")
        // And a reused entry behaves as new: runs once, disposable as usual.
        let counter = Atomic<Int>(0)
        let (kept, cancelled) = onLoop(loop) {
            let kept = loop.schedule { counter.add(1, ordering: .relaxed) }
            let cancelled = loop.schedule { counter.add(100, ordering: .relaxed) }
            cancelled.dispose()
            return (kept, cancelled)
        }
        _ = onLoop(loop) { 0 }
        #expect(counter.load(ordering: .relaxed) == 1)
        #expect(cancelled.isDisposed && !kept.isDisposed)
    }
}
