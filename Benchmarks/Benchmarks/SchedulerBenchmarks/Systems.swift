import Dispatch
@_spi(Benchmarks) import LoopScheduling
import NIOCore
import NIOPosix
import Scheduling

/// A cancellable piece of scheduled work, whatever system scheduled it.
protocol Cancellable {
    func cancel()
}

/// The operations the workloads need, on each system compared.
protocol BenchSystem: Sendable {
    /// Submits work (from whatever thread calls it).
    func execute(_ body: @escaping @Sendable () -> Void)
    /// A one-shot timer.
    func schedule(afterNanoseconds delay: Int64, _ body: @escaping @Sendable () -> Void) -> any Cancellable
    /// A periodic timer (fixed rate where the system offers it; NIO's is fixed delay).
    func repeating(everyNanoseconds interval: Int64, _ body: @escaping @Sendable () -> Void) -> any Cancellable
    func shutdown()
}

private struct DisposableCancellable: Cancellable {
    let disposable: any Disposable
    func cancel() { disposable.dispose() }
}

/// LoopScheduler or QueueScheduler through the `DateScheduler` protocol.
struct SchedulerSystem: BenchSystem {
    let scheduler: any DateScheduler
    let stop: @Sendable () -> Void

    /// A LoopScheduler as applications make it (the platform's preferred timer driver), or with
    /// the timer driver chosen.
    static func loop(driver: BenchmarkTimerDriver? = nil) throws -> SchedulerSystem {
        let loop =
            try driver.map { try LoopScheduler.forBenchmark(name: "bench", driver: $0) } ?? LoopScheduler(name: "bench")
        return SchedulerSystem(scheduler: loop) { loop.shutdown() }
    }

    static func queue() -> SchedulerSystem {
        SchedulerSystem(scheduler: QueueScheduler(name: "bench", priority: .high)) {}
    }

    func execute(_ body: @escaping @Sendable () -> Void) { scheduler.schedule(body) }

    func schedule(afterNanoseconds delay: Int64, _ body: @escaping @Sendable () -> Void) -> any Cancellable {
        DisposableCancellable(disposable: scheduler.schedule(after: .nanoseconds(delay), body))
    }

    func repeating(everyNanoseconds interval: Int64, _ body: @escaping @Sendable () -> Void) -> any Cancellable {
        DisposableCancellable(
            disposable: scheduler.schedule(after: .nanoseconds(interval), repeatingEvery: .nanoseconds(interval), body)
        )
    }

    func shutdown() { stop() }
}

/// SwiftNIO's `EventLoop`: `execute`, `scheduleTask`, `Scheduled.cancel`, `scheduleRepeatedTask`.
struct NIOSystem: BenchSystem {
    let group: MultiThreadedEventLoopGroup
    let loop: any EventLoop

    init() {
        group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        loop = group.next()
    }

    private struct ScheduledCancellable: Cancellable {
        let scheduled: Scheduled<Void>
        func cancel() { scheduled.cancel() }
    }

    private struct RepeatedCancellable: Cancellable {
        let task: RepeatedTask
        func cancel() { task.cancel() }
    }

    func execute(_ body: @escaping @Sendable () -> Void) { loop.execute(body) }

    func schedule(afterNanoseconds delay: Int64, _ body: @escaping @Sendable () -> Void) -> any Cancellable {
        ScheduledCancellable(scheduled: loop.scheduleTask(in: .nanoseconds(delay), body))
    }

    func repeating(everyNanoseconds interval: Int64, _ body: @escaping @Sendable () -> Void) -> any Cancellable {
        RepeatedCancellable(
            task: loop.scheduleRepeatedTask(initialDelay: .nanoseconds(interval), delay: .nanoseconds(interval)) { _ in
                body()
            }
        )
    }

    func shutdown() { try? group.syncShutdownGracefully() }
}
