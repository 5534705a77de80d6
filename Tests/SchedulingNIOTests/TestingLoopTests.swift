#if NIO
import NIOCore
import NIOEmbedded
import Scheduling
import SchedulingNIO
import Synchronization
import Testing

/// SwiftNIO's testing loops: virtual time, nothing pending while idle, `finish()` is no shutdown.
@Suite("EventLoopScheduler on SwiftNIO's testing loops")
struct TestingLoopTests {
    @Test("Idle, an EmbeddedEventLoop's scheduler leaves nothing scheduled on the loop: after a fire, a dispose, a shutdown")
    func nothingPendingWhileIdle() throws {
        let loop = EmbeddedEventLoop()
        let scheduler = loop.scheduler
        let fired = Atomic<Int>(0)
        scheduler.schedule(after: .seconds(1)) { fired.add(1, ordering: .relaxed) }
        loop.advanceTime(by: .seconds(1))
        #expect(fired.load(ordering: .relaxed) == 1)
        #expect(try Self.scheduledTasks(on: loop) == 0, "a callback stayed pending after the last timer fired")

        let far = scheduler.schedule(after: .seconds(3600)) { fired.add(1, ordering: .relaxed) }
        loop.run()
        #expect(try Self.scheduledTasks(on: loop) == 1)
        far.dispose()
        #expect(try Self.scheduledTasks(on: loop) == 0, "a callback stayed pending after the last timer was disposed")

        scheduler.schedule(after: .seconds(3600)) { fired.add(1, ordering: .relaxed) }
        loop.run()
        scheduler.syncShutdown()
        #expect(try Self.scheduledTasks(on: loop) == 0, "a callback stayed pending after the scheduler shut down")
        #expect(fired.load(ordering: .relaxed) == 1)
    }

    @Test("EmbeddedChannel.finish() cancels the loop's tasks but does not shut the scheduler down")
    func finishIsNotShutdown() throws {
        let channel = EmbeddedChannel()
        let loop = channel.embeddedEventLoop
        let scheduler = loop.scheduler
        let fired = Atomic<Int>(0)
        let timer = scheduler.schedule(after: .seconds(5)) { fired.add(1, ordering: .relaxed) }
        loop.run()
        _ = try channel.finish()
        #expect(!timer.isDisposed, "finish() disposed a pending timer")
        #expect(!scheduler.schedule {}.isDisposed, "the scheduler refuses work after finish()")
        // The wake-up finish() cancelled is armed again at the scheduler's next batch.
        loop.run()
        loop.advanceTime(by: .seconds(5))
        #expect(fired.load(ordering: .relaxed) == 1)
        scheduler.syncShutdown()
    }

    @Test("A NIOAsyncTestingEventLoop's virtual time drives a sleep on its scheduler")
    func asyncTestingLoopSleep() async throws {
        let loop = NIOAsyncTestingEventLoop()
        let scheduler = loop.scheduler
        let slept = Task { try await scheduler.sleep(for: .seconds(30)) }
        // The sleep's timer reaches the loop; 30 s of virtual time pass in no real time.
        while scheduler.timersPending == 0 { await loop.advanceTime(by: .zero) }
        await loop.advanceTime(by: .seconds(30))
        try await slept.value
        await scheduler.shutdown()
        await loop.shutdownGracefully()
    }

    /// The scheduler's callbacks pending on `loop`, as its driver counts them (on the loop's thread).
    static func scheduledTasks(on loop: EmbeddedEventLoop) throws -> Int {
        loop.scheduler.pendingWakeUps
    }

    @Test("An EmbeddedEventLoop whose scheduler went idle can be released (its deinit requires no scheduled task)")
    func loopReleasedAfterUse() {
        weak var released: EmbeddedEventLoop?
        do {
            let loop = EmbeddedEventLoop()
            released = loop
            let scheduler = loop.scheduler
            let timeout = scheduler.schedule(after: .seconds(30)) {}
            scheduler.schedule(after: .milliseconds(10)) {}
            loop.run()
            loop.advanceTime(by: .milliseconds(10))
            timeout.dispose()
        }
        #expect(released == nil, "the loop outlived the test: something still holds it")
    }
}
#endif
