/// How a timer workload prepares its measured burst and what it checks: the two harnesses that
/// run the workloads did this differently before they shared them, and each keeps its own way so
/// that its figures stay comparable with its published ones (Docs/Performance.md, Benchmarks/README.md).
@_spi(Workloads)
public struct TimerHarness: Sendable {
    /// Gives freed memory back (`malloc_trim`) and waits a round trip before each measured burst,
    /// so every burst starts from the same heap (the burst then pays for fresh pages, as an
    /// untuned process does).
    public var trimsHeap: Bool
    /// `timers-cancel` also reads the heap once all its timers are pending (one `mallinfo2`
    /// inside the timed region).
    public var readsPeakHeap: Bool
    /// `periodic-drift` starts its timer from an action on the system rather than from the
    /// calling thread.
    public var startsPeriodicOnScheduler: Bool
    /// Timers that must never fire count into this when they do (their action captures it);
    /// nil: their action is empty.
    public var strayFires: Tally?

    /// `loopsched bench`: trims, reads the peak, starts the periodic timer from its own thread.
    /// It also counts stray fires, a self-check it reports: see ``countingStrayFires(in:)``.
    public static let loopsched = TimerHarness(
        trimsHeap: true,
        readsPeakHeap: true,
        startsPeriodicOnScheduler: false,
        strayFires: nil
    )

    /// `Benchmarks/`: no trim, no peak reading, the periodic timer started on the system, empty
    /// actions.
    public static let benchmarks = TimerHarness(
        trimsHeap: false,
        readsPeakHeap: false,
        startsPeriodicOnScheduler: true,
        strayFires: nil
    )

    /// This harness, with the actions of timers that must never fire counting into `tally`.
    public func countingStrayFires(in tally: Tally) -> TimerHarness {
        var harness = self
        harness.strayFires = tally
        return harness
    }

    /// Schedules a timer that must never fire (it is cancelled first), with the harness's action.
    @inlinable
    func neverFiring<System: WorkloadSystem>(
        _ system: System,
        afterNanoseconds delay: Int64
    ) -> System.TimerHandle {
        if let strayFires {
            system.schedule(afterNanoseconds: delay) { strayFires.add() }
        } else {
            system.schedule(afterNanoseconds: delay) {}
        }
    }
}
