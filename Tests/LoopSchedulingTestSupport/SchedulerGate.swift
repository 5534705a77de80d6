import Dispatch
import Scheduling
import Synchronization

/// Holds a scheduler's thread inside one of its actions until the test lets it go: work sent
/// meanwhile queues up behind it, and a loop held so is awake (it has taken its queue and publishes
/// no promise before it prepares to block). Only the scheduler's own thread blocks, never the
/// test's.
public final class SchedulerGate: Sendable {
    private let inside = Atomic<Bool>(false)
    private let released = Atomic<Bool>(false)
    private let release = DispatchSemaphore(value: 0)

    public init() {}

    /// Sends the action that holds `scheduler`'s thread and returns at once; ``isInside`` once it
    /// runs, and `entered` is called then.
    public func close(_ scheduler: some Scheduler, entered: (@Sendable () -> Void)? = nil) {
        scheduler.schedule { [self] in
            inside.store(true, ordering: .releasing)
            entered?()
            release.wait()
        }
    }

    /// Sends the holding action and suspends until the scheduler's thread is inside it.
    public func hold(_ scheduler: some Scheduler) async {
        await withCheckedContinuation { (entered: CheckedContinuation<Void, Never>) in
            close(scheduler) { entered.resume() }
        }
    }

    /// Whether the scheduler's thread has reached the holding action.
    public var isInside: Bool { inside.load(ordering: .acquiring) }

    /// Lets the scheduler go on; once, however often it is called (a `defer` may call it again).
    public func letGo() {
        if !released.exchange(true, ordering: .acquiringAndReleasing) { release.signal() }
    }
}
