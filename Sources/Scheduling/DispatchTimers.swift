import Dispatch
import Foundation

/// The timer and task logic shared by ``QueueScheduler`` and ``ConcurrentQueueScheduler``.
///
/// One-shot timers use `asyncAfter` holding only the ``ScheduledAction`` entry (so disposing frees
/// the closure at once) and re-check the clock when they fire, re-arming if Dispatch woke early.
/// Periodic timers are `DispatchSourceTimer`s: fixed rate, with Dispatch coalescing missed ticks
/// into one handler call. The source and the entry hold each other until disposal cancels the
/// source, so dropping the returned disposable does not stop the timer (ReactiveSwift#582).
package struct DispatchTimers: Sendable {
    package let queue: DispatchQueue
    /// The type name used in bad-input messages, such as `QueueScheduler`.
    package let typeName: String

    package init(queue: DispatchQueue, typeName: String) {
        self.queue = queue
        self.typeName = typeName
    }

    package func schedule(owner: any Scheduler, _ action: @escaping @Sendable () -> Void) -> any Disposable {
        let entry = ScheduledAction(action)
        queue.async { entry.runOnce(as: owner) }
        return entry
    }

    package func schedule(
        owner: any Scheduler, after delay: Duration, _ action: @escaping @Sendable () -> Void
    ) -> any Disposable {
        let entry = ScheduledAction(action)
        let deadline = Nanoseconds.adding(Nanoseconds.monotonicNow(), max(0, Nanoseconds.of(delay)))
        if deadline != Nanoseconds.never { armMonotonic(entry, deadline: deadline, owner: owner) }
        return entry
    }

    private func armMonotonic(_ entry: ScheduledAction, deadline: Int64, owner: any Scheduler) {
        let remaining = Nanoseconds.subtracting(deadline, Nanoseconds.monotonicNow())
        if remaining <= 0 {
            queue.async { entry.runOnce(as: owner) }
            return
        }
        queue.asyncAfter(deadline: .now() + .nanoseconds(Int(remaining))) { [self] in
            guard entry.isPending else { return }
            if Nanoseconds.monotonicNow() < deadline {
                armMonotonic(entry, deadline: deadline, owner: owner)
            } else {
                entry.runOnce(as: owner)
            }
        }
    }

    package func schedule(
        owner: any Scheduler, at date: Date, _ action: @escaping @Sendable () -> Void
    ) -> any Disposable {
        BadInput.checkDate(date, method: "\(typeName).schedule(at:)")
        let entry = ScheduledAction(action)
        let deadline = Nanoseconds.sinceEpoch(date)
        if deadline != Nanoseconds.never { armWall(entry, deadline: deadline, owner: owner) }
        return entry
    }

    private func armWall(_ entry: ScheduledAction, deadline: Int64, owner: any Scheduler) {
        if Nanoseconds.wallNow() >= deadline {
            queue.async { entry.runOnce(as: owner) }
            return
        }
        queue.asyncAfter(wallDeadline: Self.wallTime(deadline)) { [self] in
            guard entry.isPending else { return }
            if Nanoseconds.wallNow() < deadline {
                armWall(entry, deadline: deadline, owner: owner)
            } else {
                entry.runOnce(as: owner)
            }
        }
    }

    package func schedule(
        owner: any Scheduler, after delay: Duration, repeatingEvery interval: Duration, leeway: Duration,
        _ action: @escaping @Sendable () -> Void
    ) -> any Disposable {
        BadInput.checkPeriod(interval, leeway: leeway, method: "\(typeName).schedule(after:repeatingEvery:leeway:)")
        let delayNanoseconds = max(0, Nanoseconds.of(delay))
        return periodic(owner: owner, interval: interval, leeway: leeway, action) { source, repeating, leeway in
            source.schedule(deadline: .now() + .nanoseconds(Int(delayNanoseconds)), repeating: repeating, leeway: leeway)
        }
    }

    package func schedule(
        owner: any Scheduler, at date: Date, repeatingEvery interval: Duration, leeway: Duration,
        _ action: @escaping @Sendable () -> Void
    ) -> any Disposable {
        BadInput.checkDate(date, method: "\(typeName).schedule(at:repeatingEvery:leeway:)")
        BadInput.checkPeriod(interval, leeway: leeway, method: "\(typeName).schedule(at:repeatingEvery:leeway:)")
        let deadline = Nanoseconds.sinceEpoch(date)
        return periodic(owner: owner, interval: interval, leeway: leeway, action) { source, repeating, leeway in
            source.schedule(wallDeadline: Self.wallTime(deadline), repeating: repeating, leeway: leeway)
        }
    }

    private func periodic(
        owner: any Scheduler, interval: Duration, leeway: Duration, _ action: @escaping @Sendable () -> Void,
        arm: (any DispatchSourceTimer, DispatchTimeInterval, DispatchTimeInterval) -> Void
    ) -> any Disposable {
        let entry = ScheduledAction(action)
        // A Dispatch source is thread-safe (cancel() from any thread is its documented use); its
        // Swift type is just not marked Sendable on Linux.
        nonisolated(unsafe) let source = DispatchSource.makeTimerSource(queue: queue)
        arm(source, .nanoseconds(Int(Nanoseconds.of(interval))), .nanoseconds(Int(Nanoseconds.of(leeway))))
        source.setEventHandler { entry.runTick(as: owner) }
        entry.setOnDispose { source.cancel() }
        source.resume()
        return entry
    }

    private static func wallTime(_ nanosecondsSinceEpoch: Int64) -> DispatchWallTime {
        let seconds = nanosecondsSinceEpoch / 1_000_000_000
        let nanoseconds = nanosecondsSinceEpoch % 1_000_000_000
        return DispatchWallTime(timespec: timespec(tv_sec: Int(seconds), tv_nsec: Int(nanoseconds)))
    }
}
