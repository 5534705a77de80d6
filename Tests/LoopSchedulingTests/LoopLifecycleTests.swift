import Dispatch
import Foundation
import Scheduling
import Synchronization
import Testing

@testable import LoopEngine
@testable import LoopScheduling
import LoopSchedulingTestSupport

@Suite("LoopScheduler lifecycle")
struct LoopLifecycleTests {
    @Test("16 threads × 100k schedules: every task runs exactly once")
    func manyProducers() async throws {
        let loop = try LoopScheduler(name: "producers")
        await shuttingDown(loop) {
            let threads = 16
            let perThread = 100_000
            let runs = LockedValue<[Int]>(Array(repeating: 0, count: threads))
            let total = Atomic<Int>(0)
            // `concurrentPerform` blocks its caller until every producer is done: a thread made for it.
            await onOwnThread {
                DispatchQueue.concurrentPerform(iterations: threads) { thread in
                    for _ in 0..<perThread {
                        loop.schedule {
                            // Only the loop thread touches `runs`, one task at a time.
                            runs.withLock { $0[thread] += 1 }
                            total.add(1, ordering: .relaxed)
                        }
                    }
                }
            }
            #expect(await eventually(timeout: .seconds(60)) { total.load(ordering: .relaxed) == threads * perThread })
            // A second look after a round trip: nothing ran twice.
            _ = await onLoop(loop) { 0 }
            #expect(runs.withLock { $0 } == Array(repeating: perThread, count: threads))
            // The snapshot is published at the end of each batch: it may lag one batch behind.
            #expect(await eventually { loop.statistics.tasksRun >= threads * perThread })
        }
    }

    @Test("Shutdown racing 8 scheduling threads: every action ran or was disposed, never neither, never both")
    func shutdownRacingProducers() async throws {
        for round in 0..<5 {
            let loop = try LoopScheduler(name: "race\(round)")
            let records = LockedValue<[(disposable: any Disposable, ran: Flag)]>([])
            let started = DispatchSemaphore(value: 0)
            let producers = DispatchGroup()
            for thread in 0..<8 {
                DispatchQueue.global().async(group: producers) {
                    started.signal()
                    for index in 0..<2000 {
                        let ran = Flag()
                        let action: @Sendable () -> Void = { ran.set() }
                        let disposable =
                            (index + thread) % 3 == 0
                            ? loop.schedule(after: .microseconds(index % 7 * 100), action) : loop.schedule(action)
                        records.withLock { $0.append((disposable, ran)) }
                    }
                }
            }
            // The synchronous shutdown() from a plain thread, racing the producers: a thread made for it.
            await onOwnThread {
                for _ in 0..<8 { started.wait() }
                loop.syncShutdown()
                producers.wait()
            }
            let all = records.withLock { $0 }
            var neither = 0
            var both = 0
            for record in all {
                let ran = record.ran.isSet
                let disposed = record.disposable.isDisposed
                if !ran && !disposed { neither += 1 }
                if ran && disposed { both += 1 }
            }
            #expect(neither == 0, "\(neither) actions neither ran nor were disposed")
            #expect(both == 0, "\(both) actions both ran and were disposed")
        }
    }

    @Test("Accepted tasks still run at shutdown; timers are disposed and never run")
    func shutdownRunsAcceptedWork() async throws {
        let loop = try LoopScheduler(name: "drain")
        let gate = SchedulerGate()
        let log = LockedValue<[String]>([])
        gate.close(loop)
        let task = loop.schedule { log.withLock { $0.append("task") } }
        let timer = loop.schedule(after: .zero) { log.withLock { $0.append("timer") } }
        let periodic = loop.schedule(after: .zero, repeatingEvery: .milliseconds(1)) {
            log.withLock { $0.append("tick") }
        }
        // The synchronous shutdown() from a plain thread: a thread made for it.
        let shutdown = Task { await onOwnThread { loop.syncShutdown() } }
        // Give shutdown() time to begin, then release the loop.
        #expect(await eventually { loop.core.lifecycle.state != .open })
        gate.letGo()
        await shutdown.value
        #expect(log.withLock { $0 } == ["task"])
        #expect(!task.isDisposed)
        #expect(timer.isDisposed && periodic.isDisposed)
    }

    @Test("Scheduling after shutdown is inert: disposed, never run, closure released")
    func scheduleAfterShutdown() async throws {
        let loop = try LoopScheduler(name: "inert")
        await loop.shutdown()
        var tracked: Tracked? = Tracked()
        let weak = WeakTracked(tracked!)
        let ran = Atomic<Bool>(false)
        let disposables = [
            loop.schedule { [tracked] in
                _ = tracked
                ran.store(true, ordering: .relaxed)
            },
            loop.schedule(after: .zero) { [tracked] in
                _ = tracked
                ran.store(true, ordering: .relaxed)
            },
            loop.schedule(at: Date()) { ran.store(true, ordering: .relaxed) },
            loop.schedule(after: .zero, repeatingEvery: .milliseconds(1)) { ran.store(true, ordering: .relaxed) },
        ]
        tracked = nil
        #expect(disposables.allSatisfy { $0.isDisposed })
        #expect(weak.isNil)
        let didRun = ran.load(ordering: .relaxed)
        #expect(!didRun)
    }

    @Test("shutdown() twice, and from the loop thread, completes")
    func shutdownTwiceAndFromLoop() async throws {
        let loop = try LoopScheduler(name: "twice")
        await withCheckedContinuation { done in
            loop.schedule {
                loop.syncShutdown()
                loop.syncShutdown()
                done.resume()
            }
        }
        // Then twice more from a plain thread, where shutdown() waits: a thread made for it.
        await onOwnThread {
            loop.syncShutdown()
            loop.syncShutdown()
        }
        let refused = loop.schedule {}
        #expect(refused.isDisposed)
    }

    @Test("Dropping the last reference with pending timers shuts down and releases everything")
    func deinitWithPendingTimers() async throws {
        let weakLoop = LockedValue<WeakLoop>(WeakLoop())
        // The last reference dropped off the loop thread shuts down and waits, as shutdown() does:
        // a thread made for it.
        let (weakTracked, timer) = try await onOwnThread { () throws -> (WeakTracked, (any Disposable)?) in
            var tracked: Tracked? = Tracked()
            let weakTracked = WeakTracked(tracked!)
            var timer: (any Disposable)?
            do {
                let loop = try LoopScheduler(name: "deinit")
                weakLoop.withLock { $0.loop = loop }
                timer = loop.schedule(after: .seconds(30)) { [tracked] in _ = tracked }
                loop.schedule(after: .seconds(1), repeatingEvery: .seconds(1)) { [tracked] in _ = tracked }
                tracked = nil
            }
            return (weakTracked, timer)
        }
        #expect(weakLoop.withLock { $0.loop == nil }, "the scheduler outlived its last reference")
        #expect(weakTracked.isNil, "a closure outlived the scheduler")
        #expect(timer?.isDisposed == true)
    }

    @Test(
        "A scheduler dropped on another loop's thread is closed and its thread detached, never left unreaped",
        arguments: [false, true]
    )
    func deinitOnAnotherLoopsThread(shutDownFirst: Bool) async throws {
        let host = try LoopScheduler(name: "host")
        let weakLoop = LockedValue<WeakLoop>(WeakLoop())
        let holder = LockedValue<LoopScheduler?>(try LoopScheduler(name: "dropped"))
        let core = try #require(holder.withLock { loop in
            weakLoop.withLock { $0.loop = loop }
            return loop?.core
        })
        let thread = try #require(core.ownThread as? LoopThread)
        if shutDownFirst {
            // Its thread has ended when the last reference goes, and nobody joined it.
            LoopShutdown.begin(core)
            #expect(await eventually { thread.joinState == .ended })
        }
        await shuttingDown(host) {
            // Dropped inside an action of the host: a loop thread, which must not wait for the other
            // loop. Its shutdown only begins there, and nobody will ever join its thread.
            await onLoop(host) { holder.withLock { $0 = nil } }
            #expect(weakLoop.withLock { $0.loop == nil }, "the scheduler outlived its last reference")
            #expect(await eventually { core.lifecycle.state == .closed }, "the dropped scheduler never closed")
            #expect(await eventually { thread.joinState == .detached }, "the dropped scheduler's thread was left unreaped")
        }
    }

    @Test("Dropping the last reference on the loop thread shuts down without deadlock")
    func deinitOnLoopThread() async throws {
        let weakLoop = LockedValue<WeakLoop>(WeakLoop())
        let (dropped, drop) = AsyncStream.makeStream(of: Void.self)
        do {
            let loop = try LoopScheduler(name: "selfdrop")
            weakLoop.withLock { $0.loop = loop }
            // The task holds the only reference once this scope ends; it drops it on the loop thread.
            let holder = LockedValue<LoopScheduler?>(loop)
            loop.schedule {
                holder.withLock { $0 = nil }
                drop.finish()
            }
        }
        for await _ in dropped {}
        #expect(await eventually { weakLoop.withLock { $0.loop == nil } })
    }

    @Test("Cancelling 200k timers from the loop gives their slots back within an iteration")
    func memoryBackAfterCancelling() async throws {
        let loop = try LoopScheduler(name: "memory")
        await shuttingDown(loop) {
            let core = loop.core
            // A far-future wall-clock timer must not keep the heaps from shrinking.
            let wall = loop.schedule(at: .distantFuture) {}
            let peak = await onLoop(loop) {
                let timers = (0..<200_000).map { _ in loop.schedule(after: .seconds(30)) {} }
                let peak = core.timers.slotCapacity
                for timer in timers { timer.dispose() }
                return peak
            }
            #expect(peak >= 200_000)
            // The next iteration's prepare callback shrinks the emptied heap.
            #expect(await eventually { await onLoop(loop) { core.timers.slotCapacity } < 2_048 })
            #expect(loop.statistics.timersPending <= 1)
            wall.dispose()
        }
    }

    @Test("The loop thread is named after the scheduler (first 15 bytes)")
    func threadName() async throws {
        let loop = try LoopScheduler(name: "a-rather-long-scheduler-name")
        await shuttingDown(loop) {
            let name = await onLoop(loop) { currentThreadName() }
            #expect(name == "a-rather-long-s")
        }
    }

    @Test("statistics counts tasks, timers, disposals and iterations")
    func statistics() async throws {
        let loop = try LoopScheduler(name: "stats")
        await shuttingDown(loop) {
            let done = Atomic<Int>(0)
            for _ in 0..<10 { loop.schedule { done.add(1, ordering: .relaxed) } }
            for _ in 0..<5 { loop.schedule(after: .milliseconds(1)) { done.add(1, ordering: .relaxed) } }
            loop.schedule(after: .seconds(3600)) {}.dispose()
            let pending = loop.schedule(after: .seconds(3600)) {}
            #expect(await eventually { done.load(ordering: .relaxed) == 15 })
            _ = await onLoop(loop) { 0 }
            #expect(await eventually { loop.statistics.timersFired == 5 && loop.statistics.disposedBeforeRun == 1 })
            let stats = loop.statistics
            #expect(stats.tasksRun >= 10)
            #expect(stats.timersFired == 5)
            #expect(stats.timersPending == 1)
            #expect(stats.disposedBeforeRun == 1)
            #expect(stats.loopIterations > 0)
            #expect(stats.maxLateness >= stats.recentLateness)
            pending.dispose()
        }
    }

    @Test("LoopSchedulerGroup hands loops out round robin and shuts them all down")
    func group() async throws {
        let group = try LoopSchedulerGroup(count: 3, name: "group")
        let picks = (0..<6).map { _ in ObjectIdentifier(group.next()) }
        #expect(picks[0] != picks[1] && picks[1] != picks[2] && picks[0] == picks[3])
        await group.shutdown()
        #expect(group.schedulers.allSatisfy { $0.schedule {}.isDisposed })
    }

    @Test("A host's adopted loop closes cleanly: shutdown closes only the scheduler's handles")
    func adoptedLoopClosesCleanly() async throws {
        let (host, loop) = try await HostLoop.start(name: "host") { try LoopScheduler(adopting: $0) }
        let ran = Atomic<Bool>(false)
        loop.schedule(after: .milliseconds(1)) { ran.store(true, ordering: .relaxed) }
        #expect(await eventually { ran.load(ordering: .relaxed) })
        await loop.shutdown()
        #expect(await host.finished() == 0)
    }
}

struct WeakLoop {
    weak var loop: LoopScheduler?
}

/// The kernel's name for the calling thread.
func currentThreadName() -> String {
    let name = (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? ""
    return name.trimmingCharacters(in: .newlines)
}

final class Flag: Sendable {
    private let value = Atomic<Bool>(false)
    func set() { value.store(true, ordering: .releasing) }
    var isSet: Bool { value.load(ordering: .acquiring) }
}
