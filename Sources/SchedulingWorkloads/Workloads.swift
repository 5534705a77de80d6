/// The benchmark workloads of the design document (its workloads and async sections), written
/// once for the three programs that run them: `loopsched bench`, the `Benchmarks/` package (ordo-one/benchmark) and
/// `Examples/TimeoutServer` (its task-group baseline, ``raceWithSleep(_:_:)``).
///
/// **Not API.** Everything in the `SchedulingWorkloads` module is `@_spi(Workloads)`: it is a
/// library product only because `Benchmarks/` and the example are packages of their own, which
/// `package` access cannot reach. It may change in any release and has no documentation catalog.
///
/// Each workload returns raw figures (nanoseconds, bytes, counts, lateness samples); the caller
/// names and summarises them, so `loopsched`'s table and the benchmarks' metrics each keep their
/// own definitions (percentiles, units). Where the two harnesses prepare or check a run
/// differently, ``TimerHarness`` says how, so each keeps measuring what it measured before. A run
/// that does not finish in time throws ``WorkloadTimeout`` rather than waiting forever.
///
/// The timer and task workloads are generic over ``WorkloadSystem`` and inlinable: a caller that
/// passes a concrete system (``SchedulerSystem``) gets them specialised, with the same calls into
/// the scheduler as code written against it directly.
@_spi(Workloads)
public enum Workloads {
    /// Operations of one `timeouts-churn` pass: each cancels a pending timeout and schedules one.
    public static let churnOperations = 1_000_000
}
