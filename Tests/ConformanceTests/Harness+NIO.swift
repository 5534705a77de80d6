import Foundation
import LoopSchedulingTestSupport
import Scheduling
import Testing

/// A SwiftNIO testing loop's clock, which the harness reads and moves (its `advanceTime`).
protocol VirtualLoop: Sendable {
    /// The loop's `now`, in nanoseconds.
    var nanoseconds: Int64 { get }
    /// Moves the loop's time, running what falls due.
    func advance(by duration: Duration) async
}

#if NIO
import NIOCore
import NIOEmbedded
import NIOPosix
import SchedulingNIO

extension Harness {
    /// `EventLoopScheduler` on the loop of `kind`, and the loop's teardown: the scheduler ended and
    /// checked closed (on NIOPosix by the loop's own shutdown, which is the signal it must hear).
    static func makeOnEventLoop(_ kind: SchedulerKind) async throws -> Harness {
        switch kind {
        case .eventLoop:
            let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
            let scheduler = group.next().scheduler
            return Harness(kind: kind, scheduler: scheduler, expectedCurrent: scheduler) {
                try? await group.shutdownGracefully()
                await expectClosed(scheduler)
            }
        case .embeddedLoop:
            // On the thread that made it (see `onEmbeddedLoopThread`), as every call to it.
            let loop = EmbeddedEventLoop()
            let scheduler = loop.scheduler
            let clock = EmbeddedLoopClock(loop: loop)
            return Harness(kind: kind, scheduler: scheduler, expectedCurrent: scheduler, virtualLoop: clock) {
                await scheduler.shutdown()
                await expectClosed(scheduler)
                clock.release()
            }
        case .asyncTestingLoop:
            let loop = NIOAsyncTestingEventLoop()
            let scheduler = loop.scheduler
            return Harness(kind: kind, scheduler: scheduler, expectedCurrent: scheduler, virtualLoop: loop) {
                await scheduler.shutdown()
                await expectClosed(scheduler)
                await loop.shutdownGracefully()
            }
        default:
            fatalError("\(kind) is not a SwiftNIO event loop")
        }
    }

    /// Runs `body` with its nonisolated code on one thread of its own, as an `EmbeddedEventLoop`
    /// requires of every call to it.
    static func onEmbeddedLoopThread(_ body: () async throws -> Void) async throws {
        let thread = ThreadTaskExecutor(name: "conformance.embedded")
        defer { thread.stop() }
        try await withTaskExecutorPreference(thread) { try await body() }
    }

    /// After the teardown the scheduler refuses work: its shutdown was heard.
    private static func expectClosed(_ scheduler: EventLoopScheduler) async {
        let refused = scheduler.schedule(after: .seconds(1)) {}
        #expect(refused.isDisposed, "the scheduler still accepts work after its loop's shutdown")
    }
}

extension NIOAsyncTestingEventLoop: VirtualLoop {
    var nanoseconds: Int64 { Int64(now.uptimeNanoseconds) }

    func advance(by duration: Duration) async {
        await advanceTime(by: .nanoseconds(Nanoseconds.of(duration)))
    }
}

/// An `EmbeddedEventLoop`'s clock: every call on the thread that made the loop (the harness runs
/// the test's body there).
// The loop is touched on its own thread only (the harness's body runs there); the reference is
// dropped at teardown, on that thread, so the loop is released there.
final class EmbeddedLoopClock: VirtualLoop, @unchecked Sendable {
    private var loop: EmbeddedEventLoop?

    init(loop: EmbeddedEventLoop) {
        self.loop = loop
    }

    var nanoseconds: Int64 { Int64(loop!.now.uptimeNanoseconds) }

    func advance(by duration: Duration) async {
        loop!.advanceTime(by: .nanoseconds(Nanoseconds.of(duration)))
    }

    /// Shuts the loop down and releases it (it must hold no scheduled task then).
    func release() {
        try? loop?.syncShutdownGracefully()
        loop = nil
    }
}
#endif
