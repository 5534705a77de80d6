@_spi(Benchmarks) import LoopScheduling
import NIOCore
import NIOPosix
import Scheduling
@_spi(Workloads) import SchedulingWorkloads

// The systems the workloads (SchedulingWorkloads, shared with `loopsched bench`) run on here:
// this package's schedulers through the `DateScheduler` protocol (`SchedulerSystem`), and
// SwiftNIO's event loop.

extension SchedulerSystem {
    /// A LoopScheduler as applications make it (the platform's preferred timer driver), or with
    /// the timer driver chosen.
    static func loop(driver: BenchmarkTimerDriver? = nil) throws -> SchedulerSystem {
        SchedulerSystem(
            loop: try driver.map { try LoopScheduler.forBenchmark(name: "bench", driver: $0) }
                ?? LoopScheduler(name: "bench")
        )
    }

    static func queue() -> SchedulerSystem {
        SchedulerSystem(queue: QueueScheduler(name: "bench", priority: .high))
    }
}

/// SwiftNIO's `EventLoop`: `execute`, `scheduleTask`, `Scheduled.cancel`, `scheduleRepeatedTask`.
struct NIOSystem: WorkloadSystem {
    let group: MultiThreadedEventLoopGroup
    let loop: any EventLoop

    init() {
        group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        loop = group.next()
    }

    /// A one-shot or a repeated task.
    enum TimerHandle: Sendable {
        case once(Scheduled<Void>)
        case repeated(RepeatedTask)
    }

    func execute(_ body: @escaping @Sendable () -> Void) { loop.execute(body) }

    func schedule(afterNanoseconds delay: Int64, _ body: @escaping @Sendable () -> Void) -> TimerHandle {
        .once(loop.scheduleTask(in: .nanoseconds(delay), body))
    }

    func scheduleRepeating(everyNanoseconds interval: Int64, _ body: @escaping @Sendable () -> Void) -> TimerHandle {
        .repeated(
            loop.scheduleRepeatedTask(initialDelay: .nanoseconds(interval), delay: .nanoseconds(interval)) { _ in
                body()
            }
        )
    }

    func cancel(_ timer: TimerHandle) {
        switch timer {
        case .once(let scheduled): scheduled.cancel()
        case .repeated(let task): task.cancel()
        }
    }

    func shutdown() { try? group.syncShutdownGracefully() }
}
