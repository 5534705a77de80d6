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

/// `eventLoop.scheduler`: one scheduler per loop, from any thread; the loop is not kept alive.
@Suite("eventLoop.scheduler")
struct RegistryTests {
    @Test("Every thread gets the one scheduler of a loop, and each loop its own")
    func oneSchedulerPerLoop() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
        let loops = group.makeIterator().map { $0 }
        let fromHere = loops.map(\.scheduler)
        let fromLoops = try await withThrowingTaskGroup(of: (Int, ObjectIdentifier).self) { tasks in
            for (index, loop) in loops.enumerated() {
                tasks.addTask {
                    try await loop.submit { (index, ObjectIdentifier(loop.scheduler)) }.get()
                }
            }
            var found: [Int: ObjectIdentifier] = [:]
            for try await (index, identifier) in tasks { found[index] = identifier }
            return found
        }
        let fromThreads = await onOwnThread { loops.map { ObjectIdentifier($0.scheduler) } }
        for index in loops.indices {
            #expect(fromLoops[index] == ObjectIdentifier(fromHere[index]))
            #expect(fromThreads[index] == ObjectIdentifier(fromHere[index]))
        }
        #expect(fromHere[0] !== fromHere[1])
        // The scheduler's own isolation is its loop's thread.
        #expect(try await loops[0].submit { fromHere[0].isIsolatingCurrentContext() == true }.get())
        #expect(fromHere[0].isIsolatingCurrentContext() == false)
        try await group.shutdownGracefully()
    }

    @Test("A testing loop released by its test goes: its scheduler does not keep it, and a new loop gets a new scheduler")
    func releasedLoopGoes() {
        weak var released: EmbeddedEventLoop?
        do {
            let loop = EmbeddedEventLoop()
            released = loop
            _ = loop.scheduler
        }
        #expect(released == nil, "the scheduler kept its loop alive")
        // A loop made now may reuse the released one's address: the map checks the loop itself.
        let next = EmbeddedEventLoop()
        #expect(next.scheduler.eventLoop === next)
        #expect(next.scheduler === next.scheduler)
    }
}
#endif
