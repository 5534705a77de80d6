#if NIO
import Foundation
import LoopSchedulingTestSupport
import NIOCore
import NIOEmbedded
import NIOPosix
import Scheduling
import SchedulingNIO
import Synchronization
import Testing

/// SwiftNIO has no shutdown hook: on its own event loops the loop's last drain cancels the
/// scheduled callbacks still pending, and the scheduler keeps one pending at all times to hear it.
@Suite("EventLoopScheduler: the loop's shutdown")
struct EventLoopShutdownTests {
    @Test("An idle scheduler hears its loop's shutdown: a sleep begun after it throws SchedulerShutdownError")
    func idleSchedulerHearsShutdown() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let scheduler = group.next().scheduler
        // Made on another thread: its first callback is armed on the loop; a round trip lets the
        // loop get to it.
        #expect(try await onLoop(scheduler) { true })
        try await group.shutdownGracefully()
        await #expect(throws: SchedulerShutdownError.self) { try await scheduler.sleep(for: .seconds(30)) }
        #expect(scheduler.schedule(after: .seconds(1)) {}.isDisposed)
        #expect(scheduler.schedule {}.isDisposed)
    }

    @Test("The loop's shutdown disposes pending timers, releases their closures, and wakes sleepers and timeouts with SchedulerShutdownError")
    func pendingWorkAtShutdown() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let scheduler = group.next().scheduler
        let fired = Atomic<Int>(0)
        let (timer, watcher) = { () -> (any Disposable, WeakTracked) in
            let captured = Tracked()
            let timer = scheduler.schedule(after: .seconds(3600)) { [captured] in
                withExtendedLifetime(captured) {}
                fired.add(1, ordering: .relaxed)
            }
            return (timer, WeakTracked(captured))
        }()
        let idle = scheduler.scheduleRearmable(after: .seconds(3600)) { fired.add(1, ordering: .relaxed) }
        let sleeper = Task { try await scheduler.sleep(for: .seconds(3600)) }
        let timeout = Task { try await scheduler.withTimeout(.seconds(3600)) { try await Task.sleep(for: .seconds(3600)) } }
        let ticks = Task { () -> Int in
            var count = 0
            for await _ in scheduler.ticks(every: .seconds(3600)) { count += 1 }
            return count
        }
        #expect(await eventually { scheduler.timersPending == 5 })
        try await group.shutdownGracefully()
        await #expect(throws: SchedulerShutdownError.self) { try await sleeper.value }
        await #expect(throws: SchedulerShutdownError.self) { try await timeout.value }
        #expect(await ticks.value == 0)
        #expect(timer.isDisposed)
        #expect(idle.isDisposed)
        #expect(idle.rearm(after: .seconds(1)) == false)
        #expect(watcher.isNil, "a disposed timer's closure outlived the shutdown")
        #expect(fired.load(ordering: .relaxed) == 0)
    }

    @Test("A task that prefers the scheduler and a job pinned to it after the loop shut down run on the fallback, in order")
    func jobsAfterShutdownRunOnFallback() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let scheduler = group.next().scheduler
        try await group.shutdownGracefully()
        let counter = Counter(scheduler: scheduler)
        let values = await Task(executorPreference: scheduler) { () -> [Int] in
            var values: [Int] = []
            for _ in 0..<3 { values.append(await counter.next()) }
            return values
        }.value
        #expect(values == [1, 2, 3])
    }

    @Test("shutdown() ends the scheduler before its loop does, and the loop's shutdown afterwards is quiet")
    func explicitShutdownFirst() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let loop = group.next()
        let scheduler = loop.scheduler
        let timer = scheduler.schedule(after: .seconds(3600)) {}
        await scheduler.shutdown()
        #expect(timer.isDisposed)
        #expect(loop.scheduler === scheduler, "the loop keeps its scheduler, shut down")
        // The scheduler left nothing scheduled on the loop: it shuts down as if never used.
        try await group.shutdownGracefully()
    }
}

/// An actor pinned to the scheduler.
actor Counter {
    let scheduler: EventLoopScheduler
    var value = 0
    init(scheduler: EventLoopScheduler) { self.scheduler = scheduler }
    nonisolated var unownedExecutor: UnownedSerialExecutor { scheduler.asUnownedSerialExecutor() }
    func next() -> Int {
        value += 1
        return value
    }
}

/// Runs `body` on the scheduler's loop thread, as one of its actions, and returns its result.
func onLoop<T: Sendable>(_ scheduler: EventLoopScheduler, _ body: @escaping @Sendable () -> T) async throws -> T {
    await withCheckedContinuation { continuation in
        scheduler.schedule { continuation.resume(returning: body()) }
    }
}

final class Tracked: Sendable {}

/// A weak reference that crosses threads.
final class WeakTracked: Sendable {
    private struct Reference { weak var object: Tracked? }
    private let reference: Mutex<Reference>
    init(_ object: Tracked) { reference = Mutex(Reference(object: object)) }
    var isNil: Bool { reference.withLock { $0.object == nil } }
}
#endif
