import LoopEngine
@_spi(SchedulerEngine) import Scheduling
import Synchronization

/// Several LoopSchedulers, each on its own thread, handed out round robin.
public final class LoopSchedulerGroup: Sendable {
    /// The schedulers, in the order ``next()`` hands them out.
    public let schedulers: [LoopScheduler]
    private let cursor = Cursor()
    /// Set by the first ``claimOnce()``.
    private let claimed = Atomic<Bool>(false)

    /// Integrations (a service's `run()`): claims the group once; false if it was claimed before.
    package func claimOnce() -> Bool {
        !claimed.exchange(true, ordering: .acquiringAndReleasing)
    }

    /// Integrations: returns once every loop of the group is closed.
    package func waitUntilClosed() async {
        for scheduler in schedulers { await scheduler.waitUntilClosed() }
    }

    /// Starts `count` loops named `"<name>-<index>"`. A `count` below 1 stops the program with a
    /// message naming it, in every build configuration.
    ///
    /// Each loop costs a thread and six file descriptors on Linux (see
    /// ``LoopScheduler/init(name:)``): one group per process, of about one loop per core.
    ///
    /// - Throws: ``LoopSchedulerError`` if a loop cannot be started; the loops started before it are
    ///   shut down first (their threads joined), so nothing is left running.
    public convenience init(count: Int, name: String = "LoopGroup") throws {
        try self.init(count: count, name: name, makeScheduler: { try LoopScheduler(name: $0) })
    }

    /// The same, every loop reporting its iterations to `metricsDelegate` (which tells them apart
    /// by ``LoopIterationInfo/loopName``).
    public convenience init(
        count: Int,
        name: String = "LoopGroup",
        metricsDelegate: any LoopSchedulerMetricsDelegate
    ) throws {
        try self.init(count: count, name: name) { try LoopScheduler(name: $0, metricsDelegate: metricsDelegate) }
    }

    private init(count: Int, name: String, makeScheduler: (String) throws -> LoopScheduler) throws {
        if count < 1 {
            fatalError("LoopSchedulerGroup.init(count:name:): count must be positive (got \(count))")
        }
        var started: [LoopScheduler] = []
        do {
            for index in 0..<count { started.append(try makeScheduler("\(name)-\(index)")) }
        } catch {
            for scheduler in started { scheduler.syncShutdown() }
            throw error
        }
        schedulers = started
    }

    /// The next scheduler, round robin. Thread-safe.
    public func next() -> LoopScheduler {
        schedulers[cursor.next() % schedulers.count]
    }

    /// Shuts every loop down and waits, blocking the calling thread (see
    /// ``LoopScheduler/syncShutdown()``): begins all the shutdowns, so the loops drain in parallel,
    /// then waits for each. Called on one of the group's loop threads (or any loop's) it begins
    /// them all and returns without waiting, so two loops of a group that both call it cannot
    /// deadlock. Async code awaits ``shutdown()`` instead.
    @available(*, noasync, message: "blocks the thread: use 'await shutdown()' in async code")
    public func syncShutdown() {
        for scheduler in schedulers { LoopShutdown.begin(scheduler.core) }
        for scheduler in schedulers { scheduler.syncShutdown() }
    }

    /// Shuts every loop down and suspends until all are closed, without blocking the calling
    /// task's thread (see ``LoopScheduler/shutdown()``).
    public func shutdown() async {
        for scheduler in schedulers { LoopShutdown.begin(scheduler.core) }
        for scheduler in schedulers { await scheduler.shutdown() }
    }
}
