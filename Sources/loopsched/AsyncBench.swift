#if CommandLineTool
import LoopScheduling

/// Runs the async workloads after the timer workloads, in an order chosen so that no run disturbs
/// another: everything that leaves cancelled `Task.sleep`s queued in the global executor runs
/// last, after every other run, so that their expiry 30 s later falls after the measurements
/// (with the default counts and repetitions) instead of inside a Dispatch-based row.
struct AsyncBench {
    let workloads: [AsyncWorkload]
    let repetitions: Int
    /// Operations per run, nil for each workload's own count.
    let size: Int?
    /// Each workload's own count is its full one rather than the default run's.
    let full: Bool
    let driver: TimerDriverKind

    typealias Samples = [AsyncWorkload: [AsyncSystem: [Sample]]]

    /// The runs in order; `repetition` alternates which system goes first.
    var plan: [(workload: AsyncWorkload, system: AsyncSystem, repetition: Int)] {
        var plan: [(AsyncWorkload, AsyncSystem, Int)] = []
        for queuesSleeps in [false, true] {
            for workload in workloads {
                let systems = workload.systems.filter { workload.leavesSleepsQueued(on: $0) == queuesSleeps }
                for repetition in 0..<repetitions {
                    let order = repetition % 2 == 0 ? systems : systems.reversed()
                    plan += order.map { (workload, $0, repetition) }
                }
            }
        }
        return plan
    }

    func requestedSize(of workload: AsyncWorkload) -> Int {
        size ?? (full ? workload.fullSize : workload.defaultSize)
    }

    func run(progress: Progress) throws -> Samples {
        var samples: Samples = [:]
        for (workload, system, _) in plan {
            progress.step("\(workload.rawValue) on \(system.displayName)")
            let n = workload.size(on: system, requested: requestedSize(of: workload))
            let sample = try workload.run(on: system, size: n, driver: driver)
            samples[workload, default: [:]][system, default: []].append(sample)
        }
        return samples
    }
}
#endif
