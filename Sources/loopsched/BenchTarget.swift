#if CommandLineTool
import LoopScheduling
import Scheduling
@_spi(Workloads) import SchedulingWorkloads

/// The schedulers `loopsched` compares.
enum BenchTarget: String, CaseIterable, Codable {
    case loop
    case queue

    var displayName: String {
        switch self {
        case .loop: "LoopScheduler"
        case .queue: "QueueScheduler"
        }
    }

    /// A fresh scheduler of this kind; `driver` wakes a LoopScheduler's timers.
    func make(driver: TimerDriverKind) throws -> SchedulerSystem {
        switch self {
        case .loop: SchedulerSystem(loop: try LoopScheduler(name: "bench-loop", clock: SystemClock(), driver: driver))
        case .queue: SchedulerSystem(queue: QueueScheduler(name: "loopsched", priority: .high))
        }
    }
}
#endif
