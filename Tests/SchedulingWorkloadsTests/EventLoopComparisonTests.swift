#if NIO
import LoopSchedulingTestSupport
@_spi(Workloads) import SchedulingWorkloads
import Testing

/// The workloads of `loopsched bench --workload nio-…` and the Benchmarks' `nio-*` rows, small,
/// on every system: each keeps its own self-checks (what they count, not how fast). They block
/// on the system's thread, so each runs on a thread of its own.
@Suite("SwiftNIO comparison workloads")
struct EventLoopComparisonTests {
    @Test(
        "nio-cancel: every timer cancelled, each cancellation confirmed or heard once, none fired",
        arguments: EventLoopSystemKind.allCases
    )
    func cancel(kind: EventLoopSystemKind) async throws {
        let order = [3, 0, 4, 1, 2, 7, 5, 6]
        let result = try await onOwnThread { try Workloads.eventLoopCancel(kind, order: order, harness: .benchmarks) }
        #expect(result.strayFires == 0)
        #expect(result.run.unconfirmed == 0)
        #expect(result.cancellationsHeard == (kind == .nioScheduleCallback ? order.count : nil))
    }

    @Test(
        "nio-rearm: pushed-back timers never fire; SwiftNIO's callbacks each cancelled once",
        arguments: EventLoopSystemKind.allCases,
        [false, true]
    )
    func rearm(kind: EventLoopSystemKind, random: Bool) async throws {
        let result = try await onOwnThread {
            try Workloads.eventLoopRearm(
                kind,
                pending: 16,
                random: random,
                operations: 200,
                generator: SystemRandomNumberGenerator()
            )
        }
        guard kind.rearms else {
            #expect(result == nil)
            return
        }
        let run = try #require(result)
        #expect(run.strayFires == 0)
        #expect(run.cancellationsHeard == (kind == .nioScheduleCallback ? 16 + 200 : nil))
    }

    @Test("nio-fire: every timer fires once, none before its deadline", arguments: EventLoopSystemKind.allCases)
    func fire(kind: EventLoopSystemKind) async throws {
        let delays = (0..<200).map { Int64($0) * 50_000 }
        let run = try await onOwnThread {
            try Workloads.eventLoopFire(kind, fire: TimerBurst(delays: delays), lateness: [TimerBurst(delays: delays)])
        }
        #expect(run.fire.early == 0)
        #expect(run.fire.extra == 0)
        #expect(run.lateness.count == 1)
        #expect(run.lateness.allSatisfy { $0.early == 0 && $0.missing == 0 && $0.extra == 0 })
    }

    @Test(
        "nio-memory: the figures each system has, and no pending timer fires",
        arguments: EventLoopSystemKind.allCases
    )
    func memory(kind: EventLoopSystemKind) async throws {
        let run = try await onOwnThread { try Workloads.eventLoopMemory(kind, 100, harness: .benchmarks) }
        #expect((run.closureTimer != nil) == kind.hasClosureTimers)
        #expect((run.handlerTimer != nil) == kind.hasHandlerTimers)
        #expect(run.strayFires == 0)
    }
}
#endif
