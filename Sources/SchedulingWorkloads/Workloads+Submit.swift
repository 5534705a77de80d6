import Synchronization

/// Who submits the tasks of `submit-cross` and `submit-onloop`.
@_spi(Workloads)
public enum TaskSubmitter: Sendable {
    /// The calling thread (`submit-cross`): each task crosses threads.
    case otherThread
    /// A task on the system itself (`submit-onloop`): its own queue.
    case system
}

@_spi(Workloads)
extension Workloads {
    /// `submit-cross` and `submit-onloop`: `submitter` submits `n` tasks to the system;
    /// nanoseconds per task from the first submission until all ran.
    @inlinable
    public static func submit<System: WorkloadSystem>(
        _ system: System,
        _ n: Int,
        from submitter: TaskSubmitter
    ) throws(WorkloadTimeout) -> Double {
        let countdown = Countdown(n)
        let start = Atomic<Int64>(0)
        switch submitter {
        case .otherThread:
            start.store(Measure.now(), ordering: .relaxed)
            for _ in 0..<n { system.execute { countdown.tick() } }
        case .system:
            system.execute {
                start.store(Measure.now(), ordering: .relaxed)
                for _ in 0..<n { system.execute { countdown.tick() } }
            }
        }
        guard countdown.wait(timeout: .seconds(120)) else {
            throw WorkloadTimeout("\(countdown.left) of \(n) tasks never ran")
        }
        return Double(countdown.finishedAt.load(ordering: .acquiring) - start.load(ordering: .relaxed)) / Double(n)
    }
}
