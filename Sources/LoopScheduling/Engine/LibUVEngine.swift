import LoopEngine
@_spi(SchedulerEngine) import Scheduling

/// The engine on libuv: what a LoopScheduler's initialisers set up (its handles, and in
/// own-thread mode its thread), and how an owned loop runs.
enum LibUVEngine {
    /// Sets up an engine whose driver is libuv's handles, on a new loop or on a host's `adopted`
    /// one, with its own thread in ``LoopMode/ownThread``. On failure releases exactly what was
    /// acquired and throws ``LoopSchedulerError``.
    static func make(
        name: String,
        mode: LoopMode,
        adopting adopted: UnsafeMutableRawPointer?,
        clock: any ClockSource,
        driver kind: TimerDriverKind,
        faults: LoopSetUpFaults,
        metricsDelegate: (any LoopSchedulerMetricsDelegate)?
    ) throws -> LoopCore {
        try LoopCore(
            name: name,
            mode: mode,
            clock: clock,
            observer: metricsDelegate.map(MetricsDelegateObserver.init),
            makeDriver: { core in try UVHandles(adopting: adopted, core: core, driver: kind, faults: faults) },
            startThread: { core in
                let thread = LoopThread()
                try thread.start(name: name, faults: faults) {
                    core.noteLoopThread()
                    runOwnedLoop(core)
                }
                return thread
            }
        )
    }

    /// Runs an owned loop (its own thread, or `run(name:_:)`'s caller) until shutdown closed every
    /// handle, closes it, and tells the shutdown sequence (``LoopShutdown``).
    static func runOwnedLoop(_ core: LoopCore) {
        // The engine's driver is the handles this type made it with.
        let handles = unsafeDowncast(core.loopDriver, to: UVHandles.self)
        let marked = LoopThreadMarker.enter()
        handles.run()
        handles.closeLoop()
        LoopThreadMarker.leave(marked)
        LoopShutdown.ownedLoopClosed(core)
    }
}

/// A metrics delegate as the engine's observer of its iterations.
struct MetricsDelegateObserver: LoopIterationObserver {
    let delegate: any LoopSchedulerMetricsDelegate

    func loopIterationDidEnd(_ figures: LoopIterationFigures) {
        delegate.loopIterationDidEnd(
            LoopIterationInfo(
                loopName: figures.loopName,
                end: figures.end,
                duration: figures.duration,
                sleepTime: figures.sleepTime,
                tasksRun: figures.tasksRun,
                timersFired: figures.timersFired,
                disposedBeforeRun: figures.disposedBeforeRun,
                timersPending: figures.timersPending,
                maxLateness: figures.maxLateness,
                totalLateness: figures.totalLateness
            )
        )
    }
}

extension LoopStatistics {
    /// The engine's published counters, as a snapshot.
    init(_ counts: LoopReporter.Counts) {
        self.init(
            tasksRun: counts.tasksRun,
            timersFired: counts.timersFired,
            timersPending: counts.timersPending,
            disposedBeforeRun: counts.disposedBeforeRun,
            loopIterations: counts.loopIterations,
            maxLateness: .nanoseconds(counts.maxLateness),
            recentLateness: .nanoseconds(counts.recentLateness)
        )
    }
}
