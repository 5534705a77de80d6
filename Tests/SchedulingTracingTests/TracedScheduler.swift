#if Tracing
import Foundation
import LoopScheduling
import LoopSchedulingTestSupport
import Scheduling
import Testing

/// Every kind of scheduler the propagation is checked on: the Dispatch-backed ones, the virtual-time
/// one and `LoopScheduler` in its three modes (own thread, caller's thread, adopted host loop).
enum TracedKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case immediate, queue, concurrentQueue, subscription, test, loop, loopCallerThread, loopAdopted

    /// The kinds that are `DateScheduler`s (all but `ImmediateScheduler`).
    static let dateKinds = allCases.filter { $0 != .immediate }
    /// The kinds that run an action later, on a context of their own (not inline in `schedule`,
    /// not on the thread that drives virtual time).
    static let deferred: [TracedKind] = [.queue, .concurrentQueue, .loop, .loopCallerThread, .loopAdopted]

    var testDescription: String { rawValue }
}

/// A scheduler under test and how to drive and end it, without ever blocking a cooperative-pool
/// thread: what blocks (`LoopScheduler.run`) runs on a thread made for it, loops end with the async
/// `shutdown()`, a host loop is awaited with `finished()`.
final class TracedScheduler: Sendable {
    let kind: TracedKind
    let base: any Scheduler
    /// What `Schedulers.current` is inside an action of `base` scheduled from a test task.
    let expectedCurrent: (any Scheduler)?
    private let tearDownBody: @Sendable () async -> Void

    private init(
        kind: TracedKind,
        base: any Scheduler,
        expectedCurrent: (any Scheduler)?,
        tearDown: @escaping @Sendable () async -> Void = {}
    ) {
        self.kind = kind
        self.base = base
        self.expectedCurrent = expectedCurrent
        self.tearDownBody = tearDown
    }

    var dateBase: any DateScheduler { base as! any DateScheduler }
    var testScheduler: TestScheduler? { base as? TestScheduler }

    /// Runs `body` with a fresh scheduler of `kind` and ends the scheduler afterwards.
    static func with(_ kind: TracedKind, _ body: (TracedScheduler) async throws -> Void) async throws {
        let scheduler = try await make(kind)
        do {
            try await body(scheduler)
        } catch {
            await scheduler.tearDownBody()
            throw error
        }
        await scheduler.tearDownBody()
    }

    /// Moves virtual time on (the test scheduler only) far enough for whatever a test scheduled.
    func drive(by duration: Duration = .seconds(1)) {
        testScheduler?.advance(by: duration)
    }

    private static func make(_ kind: TracedKind) async throws -> TracedScheduler {
        switch kind {
        case .immediate:
            return TracedScheduler(kind: kind, base: ImmediateScheduler(), expectedCurrent: nil)
        case .queue:
            let queue = QueueScheduler(name: "tracing.queue")
            return TracedScheduler(kind: kind, base: queue, expectedCurrent: queue)
        case .concurrentQueue:
            let queue = ConcurrentQueueScheduler(name: "tracing.concurrent")
            return TracedScheduler(kind: kind, base: queue, expectedCurrent: queue)
        case .subscription:
            // Scheduled from a test task (no current scheduler): its work goes to its background.
            let subscription = SubscriptionScheduler()
            return TracedScheduler(kind: kind, base: subscription, expectedCurrent: subscription.background)
        case .test:
            let test = TestScheduler(now: Date())
            return TracedScheduler(kind: kind, base: test, expectedCurrent: test)
        case .loop:
            let loop = try LoopScheduler(name: "tracing.loop")
            return TracedScheduler(kind: kind, base: loop, expectedCurrent: loop) { await loop.shutdown() }
        case .loopCallerThread:
            // `run(name:)` blocks its caller until shutdown: a thread made for it.
            let (handOver, give) = AsyncStream.makeStream(of: LoopScheduler.self)
            let returned = Task {
                await onOwnThread(name: "tracing.run") {
                    try! LoopScheduler.run(name: "tracing.run") { loop in give.yield(loop) }
                }
            }
            var loops = handOver.makeAsyncIterator()
            let loop = await loops.next()!
            return TracedScheduler(kind: kind, base: loop, expectedCurrent: loop) {
                await loop.shutdown()
                await returned.value
            }
        case .loopAdopted:
            let (host, loop) = try await HostLoop.start(name: "tracing.host") { try LoopScheduler(adopting: $0) }
            return TracedScheduler(kind: kind, base: loop, expectedCurrent: loop) {
                await loop.shutdown()
                _ = await host.finished()
            }
        }
    }
}
#endif
