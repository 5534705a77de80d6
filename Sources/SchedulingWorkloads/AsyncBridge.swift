import Dispatch
import Foundation
import LoopScheduling
import Scheduling

/// The harnesses' threads are plain threads, not the cooperative pool: they may block on a task,
/// and the task then runs on executors the harness does not occupy.
@_spi(Workloads)
public enum AsyncBridge {
    /// Waits for `task`'s value; nil if `timeout` passed first (the task is then left running).
    public static func value<T: Sendable>(of task: Task<T, Never>, timeout: Duration = .seconds(300)) -> T? {
        let result = LockedValue<T?>(nil)
        let done = DispatchSemaphore(value: 0)
        Task.detached {
            let value = await task.value
            result.withLock { $0 = value }
            done.signal()
        }
        guard done.wait(timeout: .now() + .nanoseconds(Int(Nanoseconds.of(timeout)))) == .success else { return nil }
        return result.withLock { $0 }
    }

    /// Waits until `scheduler` ran everything queued before this call.
    public static func roundTrip(_ scheduler: some Scheduler) {
        let done = DispatchSemaphore(value: 0)
        scheduler.schedule { done.signal() }
        done.wait()
    }

    /// The same for a loop, and then waits until the loop finished that iteration: its prepare,
    /// where a quiet loop gives memory back, runs only after the action that signals the wait.
    public static func roundTripAndIteration(_ loop: LoopScheduler) {
        let iteration = LockedValue(0)
        let done = DispatchSemaphore(value: 0)
        loop.schedule {
            iteration.withLock { $0 = loop.statistics.loopIterations }
            done.signal()
        }
        done.wait()
        let seen = iteration.withLock { $0 }
        while loop.statistics.loopIterations <= seen {
            _ = done.wait(timeout: .now() + .microseconds(100))
        }
    }

    /// Whether the calling code runs as work of `scheduler` (nil: of no scheduler).
    public static func isCurrent(_ scheduler: (any Scheduler)?) -> Bool {
        Schedulers.current.map { $0 as AnyObject } === scheduler.map { $0 as AnyObject }
    }
}
