import Dispatch
import Foundation

/// The timer and task logic shared by ``QueueScheduler`` and ``ConcurrentQueueScheduler``.
///
/// One-shot timers live in a ``DispatchTimerQueue`` (the scheduler's own heap, FIFO for equal
/// deadlines, freed at once on dispose). Periodic timers are `DispatchSourceTimer`s: fixed rate, with Dispatch coalescing missed ticks
/// into one handler call. The source and the entry hold each other until disposal cancels the
/// source, so dropping the returned disposable does not stop the timer (ReactiveSwift#582).
package struct DispatchTimers: Sendable {
    package let queue: DispatchQueue
    /// The type name used in bad-input messages, such as `QueueScheduler`.
    package let typeName: String
    private let timers: DispatchTimerQueue

    package init(queue: DispatchQueue, typeName: String, runsSerially: Bool) {
        self.queue = queue
        self.typeName = typeName
        self.timers = DispatchTimerQueue(queue: queue, runsSerially: runsSerially)
    }

    package func schedule(owner: any Scheduler, _ action: @escaping @Sendable () -> Void) -> any Disposable {
        let entry = ScheduledAction(action)
        queue.async { entry.runOnce(as: owner) }
        return entry
    }

    package func schedule(
        owner: any Scheduler,
        after delay: Duration,
        _ action: @escaping @Sendable () -> Void
    ) -> any Disposable {
        let deadline = Nanoseconds.adding(Nanoseconds.monotonicNow(), max(0, Nanoseconds.of(delay)))
        return timers.schedule(deadline: deadline, wall: false, owner: owner, action)
    }

    package func schedule(
        owner: any Scheduler,
        at date: Date,
        _ action: @escaping @Sendable () -> Void
    ) -> any Disposable {
        BadInput.checkDate(date, method: "\(typeName).schedule(at:)")
        return timers.schedule(deadline: Nanoseconds.sinceEpoch(date), wall: true, owner: owner, action)
    }

    package func schedule(
        owner: any Scheduler,
        after delay: Duration,
        repeatingEvery interval: Duration,
        leeway: Duration,
        _ action: @escaping @Sendable () -> Void
    ) -> any Disposable {
        BadInput.checkPeriod(interval, leeway: leeway, method: "\(typeName).schedule(after:repeatingEvery:leeway:)")
        let delayNanoseconds = max(0, Nanoseconds.of(delay))
        if Nanoseconds.adding(Nanoseconds.monotonicNow(), delayNanoseconds) == Nanoseconds.never {
            return ScheduledAction(action)  // never due: pending until disposed, nothing armed
        }
        // Read before Dispatch reads its own clock, so Dispatch's grid is never ahead of this one.
        let grid = TickGrid(origin: Nanoseconds.monotonicNow() + delayNanoseconds, interval: interval, wall: false)
        return periodic(owner: owner, grid: grid, leeway: leeway, action) { source, repeating, leeway in
            source.schedule(
                deadline: .now() + .nanoseconds(Int(delayNanoseconds)),
                repeating: repeating,
                leeway: leeway
            )
        }
    }

    package func schedule(
        owner: any Scheduler,
        at date: Date,
        repeatingEvery interval: Duration,
        leeway: Duration,
        _ action: @escaping @Sendable () -> Void
    ) -> any Disposable {
        BadInput.checkDate(date, method: "\(typeName).schedule(at:repeatingEvery:leeway:)")
        BadInput.checkPeriod(interval, leeway: leeway, method: "\(typeName).schedule(at:repeatingEvery:leeway:)")
        let date = Nanoseconds.sinceEpoch(date)
        if date == Nanoseconds.never { return ScheduledAction(action) }
        let deadline = PeriodicGrid.latestPoint(
            origin: date,
            interval: Nanoseconds.of(interval),
            notAfter: Nanoseconds.wallNow()
        )
        let grid = TickGrid(origin: deadline, interval: interval, wall: true)
        return periodic(owner: owner, grid: grid, leeway: leeway, action) { source, repeating, leeway in
            source.schedule(wallDeadline: DispatchTimerQueue.wallTime(deadline), repeating: repeating, leeway: leeway)
        }
    }

    private func periodic(
        owner: any Scheduler,
        grid: TickGrid,
        leeway: Duration,
        _ action: @escaping @Sendable () -> Void,
        arm: (any DispatchSourceTimer, DispatchTimeInterval, DispatchTimeInterval) -> Void
    ) -> any Disposable {
        let entry = ScheduledAction(action)
        // A Dispatch source is thread-safe (cancel() from any thread is its documented use); its
        // Swift type is just not marked Sendable on Linux.
        nonisolated(unsafe) let source = DispatchSource.makeTimerSource(queue: queue)
        arm(source, .nanoseconds(Int(grid.interval)), .nanoseconds(Int(Nanoseconds.of(leeway))))
        source.setEventHandler {
            if grid.coversNewGridPoint() { entry.runTick(as: owner) }
        }
        entry.setOnDispose { source.cancel() }
        source.resume()
        return entry
    }
}

/// Where a Dispatch periodic timer stands on its grid `origin + k·interval`, so that each handler
/// call runs a tick only if a grid point passed since the last tick started.
///
/// Dispatch usually coalesces the fires missed while a tick ran into one handler call, but under
/// load it was seen delivering two missed grid points as two calls 21 µs apart: a catch-up burst,
/// which the contract forbids (`loopsched crosscheck --seed 16` found it). A call that brings no new
/// grid point is dropped. Dispatch computes its grid from a clock reading taken after `origin`, so
/// its fires are never ahead of this grid and no legitimate tick is dropped.
// Only the source's event handler touches `lastIndex`, and Dispatch never runs a source's handler
// concurrently with itself.
package final class TickGrid: @unchecked Sendable {
    let origin: Int64
    let interval: Int64
    let wall: Bool
    private var lastIndex: Int64 = -1

    package init(origin: Int64, interval: Duration, wall: Bool) {
        self.origin = origin
        self.interval = Nanoseconds.of(interval)
        self.wall = wall
    }

    /// Whether the latest grid point not after now is one no tick has covered yet; records it.
    package func coversNewGridPoint() -> Bool {
        let now = wall ? Nanoseconds.wallNow() : Nanoseconds.monotonicNow()
        let index = Nanoseconds.subtracting(now, origin) / interval
        guard index > lastIndex else { return false }
        lastIndex = index
        return true
    }
}
