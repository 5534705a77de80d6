@_spi(Benchmarks) import LoopScheduling
import Scheduling
@_spi(Workloads) import SchedulingWorkloads

// The systems the workloads (SchedulingWorkloads, shared with `loopsched bench`) run on here:
// this package's schedulers through the `DateScheduler` protocol (`SchedulerSystem`), and
// SwiftNIO's event loop (SchedulingWorkloads' `NIOTaskSystem`, with the root's trait NIO).

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
