#if NIO
import Foundation
import NIOCore
import NIOEmbedded
import NIOPosix
import Scheduling
import SchedulingNIO
import Synchronization
import Testing

@Suite("EventLoopScheduler basics")
struct EventLoopSchedulerBasicTests {
    @Test("A timer on a NIOPosix loop fires on the loop thread, no earlier than its delay")
    func timerFiresOnLoop() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let loop = group.next()
        let scheduler = loop.scheduler
        let start = ContinuousClock.now
        let onLoop = await withCheckedContinuation { (done: CheckedContinuation<Bool, Never>) in
            scheduler.schedule(after: .milliseconds(20)) { done.resume(returning: loop.inEventLoop) }
        }
        #expect(onLoop)
        #expect(ContinuousClock.now - start >= .milliseconds(20))
        #expect(loop.scheduler === scheduler)
        try await group.shutdownGracefully()
    }

    @Test("On an EmbeddedEventLoop, timers follow advanceTime")
    func embeddedVirtualTime() throws {
        let loop = EmbeddedEventLoop()
        let scheduler = loop.scheduler
        let fired = Atomic<Int>(0)
        scheduler.schedule(after: .seconds(5)) { fired.add(1, ordering: .relaxed) }
        loop.run()
        loop.advanceTime(by: .seconds(4))
        #expect(fired.load(ordering: .relaxed) == 0)
        loop.advanceTime(by: .seconds(1))
        #expect(fired.load(ordering: .relaxed) == 1)
        scheduler.syncShutdown()
        try loop.syncShutdownGracefully()
    }
}
#endif
