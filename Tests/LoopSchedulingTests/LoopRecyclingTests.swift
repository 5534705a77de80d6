import Scheduling
import Synchronization
import LoopSchedulingTestSupport
import Testing

@testable import LoopEngine
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
    func reuse() async throws {
        let loop = try LoopScheduler(name: "reuse")
        await shuttingDown(loop) {
            // A batch of dropped tasks fills the spare list once they ran.
            await onLoop(loop) { for _ in 0..<10 { loop.schedule {} } }
            let observed = await onLoop(loop) { () -> (Int, Int) in
                loop.core.recycler.spareCounts
            }
            #expect(observed.0 >= 10, "dropped task entries were not kept for reuse")
            // A held disposable is never reused: after it ran, it still reports its own state.
            let held = await onLoop(loop) { loop.schedule {} }
            _ = await onLoop(loop) { 0 }
            #expect(!held.isDisposed)
            let spareIdentities = await onLoop(loop) { loop.core.recycler.spareTaskIdentities }
            #expect(!spareIdentities.contains(ObjectIdentifier(held)), "an entry the caller holds was put up for reuse")
            // A weakly held one is not reused either: the weak reference becomes nil.
            let box = WeakBox()
            await onLoop(loop) { box.disposable = loop.schedule {} }
            _ = await onLoop(loop) { 0 }
            let weakGone = await onLoop(loop) { box.disposable == nil }
            #expect(weakGone, "an entry held weakly was kept alive for reuse")
            // Fired one-shot timers that were dropped are reused as well.
            let fired = Atomic<Int>(0)
            await onLoop(loop) { for _ in 0..<5 { loop.schedule(after: .zero) { fired.add(1, ordering: .relaxed) } } }
            #expect(await eventually { fired.load(ordering: .relaxed) == 5 })
            _ = await onLoop(loop) { 0 }
            let spareTimers = await onLoop(loop) { loop.core.recycler.spareCounts.timers }
            #expect(spareTimers >= 5, "dropped fired timer entries were not kept for reuse")
            // And a reused entry behaves as new: runs once, disposable as usual.
            let counter = Atomic<Int>(0)
            let (kept, cancelled) = await onLoop(loop) {
                let kept = loop.schedule { counter.add(1, ordering: .relaxed) }
                let cancelled = loop.schedule { counter.add(100, ordering: .relaxed) }
                cancelled.dispose()
                return (kept, cancelled)
            }
            _ = await onLoop(loop) { 0 }
            #expect(counter.load(ordering: .relaxed) == 1)
            #expect(cancelled.isDisposed && !kept.isDisposed)
        }
    }

    final class Counter: Sendable {
        let value = Atomic<Int>(0)
    }

    struct CountingHandler: SchedulerTimerHandler {
        let fired: Counter
        func timerFired() { fired.value.add(1, ordering: .relaxed) }
    }

    final class Tracked: Sendable {}

    @Test("A fired handler timer the caller dropped is never reused as a closure timer (its leeway and its release would come along)")
    func handlerTimersAreNotReused() async throws {
        let loop = try LoopScheduler(name: "reuse-handler")
        await shuttingDown(loop) {
            let fired = Counter()
            await onLoop(loop) {
                for _ in 0..<5 {
                    _ = loop.schedule(.after(.zero), leeway: .seconds(3_600), handler: CountingHandler(fired: fired))
                }
            }
            #expect(await eventually { fired.value.load(ordering: .relaxed) == 5 })
            _ = await onLoop(loop) { 0 }
            let spareTimers = await onLoop(loop) { loop.core.recycler.spareCounts.timers }
            #expect(spareTimers == 0, "a fired handler timer was kept for reuse as a closure timer")
            // A closure timer scheduled now releases its closure when disposed (rule 1).
            let released = await onLoop(loop) { () -> Bool in
                weak var tracked: Tracked?
                let timer: any Disposable
                do {
                    let object = Tracked()
                    tracked = object
                    timer = loop.schedule(after: .seconds(3_600)) { _ = object }
                }
                timer.dispose()
                return tracked == nil
            }
            #expect(released, "a disposed closure timer kept its closure")
        }
    }

    /// The loop's retained memory, read on the loop thread from a timer that fires at once: timers
    /// fire after the round's queues are back in place, so every buffer is visible.
    struct Retained: Sendable, Equatable {
        var batch = 0, remote = 0, deferred = 0, local = 0, spareItems = 0, spareTasks = 0, spareTimers = 0, slots = 0
        /// The loop iterations counted when it was read.
        var iteration = 0
        var largest: Int { [batch, remote, deferred, local, spareItems, spareTasks, spareTimers].max()! }
    }

    static func retained(_ loop: LoopScheduler) async -> Retained {
        await withCheckedContinuation { done in
            loop.schedule(after: .zero) {
                let core = loop.core
                let buffers = core.runner.bufferCapacities
                let spares = core.recycler.spareCapacities
                done.resume(
                    returning: Retained(
                        batch: buffers.batch,
                        remote: core.remote.capacity,
                        deferred: core.timers.deferredCapacity,
                        local: buffers.local,
                        spareItems: buffers.spare,
                        spareTasks: spares.tasks,
                        spareTimers: spares.timers,
                        slots: core.timers.slotCapacity,
                        iteration: core.reporter.loopIterations
                    )
                )
            }
        }
    }

    /// Waits until the loop finished the iteration counted `iteration` (its prepare published the
    /// next count): round trips sent one after another may otherwise share one batch.
    static func waitForIteration(after iteration: Int, of loop: LoopScheduler) async {
        #expect(await eventually { loop.statistics.loopIterations > iteration })
    }

    @Test("A burst's buffers and spare entries go back after one quiet iteration; steady work keeps them")
    func givesBackAfterBurst() async throws {
        let loop = try LoopScheduler(name: "give-back")
        await shuttingDown(loop) {
            // A remote burst: the loop is held in a task while this thread queues 10,000 more.
            let gate = SchedulerGate()
            await gate.hold(loop)
            for _ in 0..<10_000 { loop.schedule {} }
            gate.letGo()
            // On-loop bursts: 5,000 tasks, and 2,000 timers that fire (their entries become spares).
            let fired = Atomic<Int>(0)
            await onLoop(loop) {
                for _ in 0..<5_000 { loop.schedule {} }
                for _ in 0..<2_000 { loop.schedule(after: .zero) { fired.add(1, ordering: .relaxed) } }
            }
            #expect(await eventually { fired.load(ordering: .relaxed) == 2_000 })
            // Read in the next iteration that does work: the loop's own buffers and spares are all
            // there (the remote queue's buffers may be gone already, given back by a wake-up for
            // nothing in between).
            let grown = await Self.retained(loop)
            #expect(grown.spareTasks >= LoopEntryRecycler.limit && grown.spareTimers >= LoopEntryRecycler.limit)
            #expect(max(grown.local, grown.spareItems) >= 5_000)
            // One quiet iteration that did some work (a task: one item in one round), and its prepare
            // gives everything back. The read above is no such iteration for sure: it may share its
            // iteration with the burst's rounds (a round of thousands makes that iteration's prepare
            // keep four times as many, `LoopEntryRecycler.keep`). Once that iteration has ended, the
            // next one holds only what this test sends.
            await Self.waitForIteration(after: grown.iteration, of: loop)
            let quiet = await onLoop(loop) { loop.core.reporter.loopIterations }
            await Self.waitForIteration(after: quiet, of: loop)
            let rest = await Self.retained(loop)
            #expect(rest.largest <= LoopEntryRecycler.keptAtRest, "kept after a quiet iteration: \(rest)")
            #expect(rest.slots <= DeadlineStore.keptSlots)
            // Steady work of 500 entries per iteration keeps its spares: reused, not reallocated.
            for round in 0..<10 {
                let (spares, iteration) = await onLoop(loop) { () -> (Int, Int) in
                    // No copy of `confined` is held across the scheduling: it would share the buffers.
                    let spares = loop.core.recycler.spareCounts.tasks
                    for _ in 0..<500 { loop.schedule {} }
                    return (spares, loop.core.reporter.loopIterations)
                }
                await Self.waitForIteration(after: iteration, of: loop)
                if round > 0 { #expect(spares >= 500, "round \(round) found \(spares) spare entries") }
            }
        }
    }
}
