import LoopEngine
@_spi(SchedulerEngine) import Scheduling

/// Which timer driver wakes a benchmark's LoopScheduler.
///
/// Benchmark-only, behind `@_spi(Benchmarks)`: the `Benchmarks/` package is a separate package and
/// cannot reach the `package` initialiser that chooses the driver, yet the uv_timer fallback (the
/// only driver off Linux) has to be measured on Linux too. Applications get the platform's
/// preferred driver and have no reason to choose; this is not part of the library's API.
@_spi(Benchmarks)
public enum BenchmarkTimerDriver: Sendable {
    /// A `timerfd` watched by the loop (Linux): nanosecond deadlines.
    case timerFD
    /// One `uv_timer_t`: millisecond resolution on libuv's loop clock.
    case uvTimer
}

@_spi(Benchmarks)
extension LoopScheduler {
    /// A loop on its own thread, as ``LoopScheduler/init(name:)`` makes it, with the timer driver
    /// chosen. For benchmarks only; see ``BenchmarkTimerDriver``.
    public static func forBenchmark(name: String, driver: BenchmarkTimerDriver) throws -> LoopScheduler {
        let kind: TimerDriverKind =
            switch driver {
            case .timerFD: .timerfd
            case .uvTimer: .uvTimer
            }
        return try LoopScheduler(name: name, clock: SystemClock(), driver: kind)
    }
}
