import AllocationCounting
import Dispatch
import LoopScheduling
import Scheduling
@_spi(Workloads) import SchedulingWorkloads
import Synchronization

/// Where a path's operations are issued.
public enum Side: Sendable {
    /// On the scheduler's own context: in an action on it, or in a task that prefers it.
    case own
    /// From another thread: the probe's own thread, or a task on the global pool.
    case other
}

/// A scheduler under measurement: a `LoopScheduler` or an `EventLoopScheduler` (their thread
/// counted apart), or a `QueueScheduler`.
public struct ProbeTarget: Sendable {
    /// `loop`, `queue`, `nio`: the first part of its paths' names.
    public let name: String
    /// Where its actions run, in its paths' names (`on-loop`, `off-queue`) and descriptions.
    public let place: String
    /// The scheduler under measurement.
    public let scheduler: any DateScheduler
    /// The scheduler as a task executor (tasks that prefer it).
    let executor: any TaskExecutor
    /// An actor whose executor is the scheduler.
    let pinned: any HopTarget
    /// Whether the scheduler has a thread of its own, registered in `AllocationCounter.loopSlot`.
    public let countsLoopThread: Bool
    private let held = HeldEntries()

    /// The paths of a `LoopScheduler`: `loop/…/on-loop`, its thread counted apart.
    public init(loop: LoopScheduler) {
        self.init(name: "loop", loop, countsLoopThread: true)
    }

    /// The paths of a `QueueScheduler`: `queue/…/on-queue`, on Dispatch's threads.
    public init(queue: QueueScheduler) {
        self.init(name: "queue", queue, countsLoopThread: false)
    }

    /// The paths of `target`, named `name/…/on-place` (`place` defaults to `name`); its thread
    /// counted apart if `countsLoopThread` (registered by ``registerLoopThread()``).
    public init<Target: DateScheduler & SerialExecutor & TaskExecutor>(
        name: String,
        place: String? = nil,
        _ target: Target,
        countsLoopThread: Bool
    ) {
        self.name = name
        self.place = place ?? name
        scheduler = target
        executor = target
        pinned = PinnedCounter(on: target)
        self.countsLoopThread = countsLoopThread
    }

    /// Registers the loop's thread in `AllocationCounter.loopSlot`, from an action on it.
    public func registerLoopThread() {
        onScheduler { AllocationCounter.registerCurrentThread(as: AllocationCounter.loopSlot) }
    }

    /// `loop/schedule+run/on-loop`, `queue/schedule+run/off-queue`.
    public func path(_ operation: String, _ side: Side) -> String {
        "\(name)/\(operation)/\(side == .own ? "on" : "off")-\(place)"
    }

    /// Measures `operation` issued on `side` (nil: the path has no sides) in `report`, with this
    /// scheduler's thread counted apart if it has one: `body(n)` performs `n` operations.
    public func measure(
        _ report: AllocationReport,
        _ operation: String,
        _ side: Side?,
        _ description: String,
        operations: Int,
        _ body: (_ n: Int) -> Void
    ) {
        let name = side.map { path(operation, $0) } ?? "\(self.name)/\(operation)"
        report.measure(name, description, operations: operations, countsLoopThread: countsLoopThread, body)
    }

    /// The side in words, for a path's description.
    public func issued(_ side: Side) -> String {
        side == .own ? "from an action on the \(place)" : "from another thread"
    }

    /// The tasks of an async path: preferring the scheduler, or on the global pool.
    func starter(_ side: Side) -> any TaskStarter {
        side == .own ? PreferringTaskStarter(executor) : DetachedTaskStarter()
    }

    /// `operations` operations in `batches` equal batches, each issued by `body(count)` on `side`
    /// and followed by a round trip to the scheduler (so whatever a batch queued has run). The
    /// number of batches, and so the harness's own allocations, do not depend on `operations`.
    public func inBatches(
        _ operations: Int,
        batches: Int,
        on side: Side,
        _ body: @escaping @Sendable (_ count: Int) -> Void
    ) {
        let count = operations / batches
        for _ in 0..<batches {
            switch side {
            case .own: onScheduler { body(count) }
            case .other: body(count)
            }
            roundTrip()
        }
    }

    /// Runs `body` in a task that `side`'s starter starts and waits for it (the probe's thread
    /// blocks; the task runs on the scheduler or the pool); fails `path` in `report` if the task
    /// did not end within 60 s.
    public func inTask(_ side: Side, _ path: String, _ report: AllocationReport, _ body: @escaping @Sendable () async -> Void)
    {
        if AsyncBridge.value(of: starter(side).start(body), timeout: .seconds(60)) == nil {
            report.fail("\(path): the task did not end within 60 s")
        }
    }

    /// Runs `body` as an action on the scheduler and waits for it.
    ///
    /// Unlike the workloads' `onScheduler`, it keeps the action's disposable until the next action
    /// of the harness ran: a loop keeps the entry of a finished action that only it still holds as a
    /// spare for its own thread's next `schedule`, and gives its spares back once they outgrow
    /// what it keeps at rest, so the harness's actions, left to the loop, would make the loop's
    /// spare list grow and shrink in a cycle that is not in step with the measurements. Kept, each
    /// is freed by the probe's thread, one per action, every time.
    public func onScheduler(_ body: @escaping @Sendable () -> Void) {
        let done = DispatchSemaphore(value: 0)
        let entry = scheduler.schedule {
            body()
            done.signal()
        }
        done.wait()
        held.replace(with: entry)
    }

    /// Waits until the scheduler ran everything queued before (it is serial).
    public func roundTrip() {
        onScheduler {}
    }
}

/// The disposable of the harness's last action (see ``ProbeTarget/onScheduler(_:)``): released
/// once the next one ran, when the loop has long finished with it.
final class HeldEntries: Sendable {
    private let entry = Mutex<(any Disposable)?>(nil)

    func replace(with next: any Disposable) {
        let previous = entry.withLock { held in
            defer { held = next }
            return held
        }
        _ = previous
    }
}
