import Dispatch
import Foundation
import Synchronization

/// The one-shot timers of a Dispatch-backed scheduler: its own heap ordered by
/// `(deadline, scheduling order)`, woken by one `DispatchSourceTimer` per clock.
///
/// Dispatch's own `asyncAfter` does not start equal deadlines in the order they were scheduled
/// (its timers coalesce by leeway), and it keeps a cancelled block until its deadline. Here equal
/// deadlines keep their order, disposing removes the entry from the heap and releases its closure
/// at once, and the sources fire with zero leeway. Each fire re-reads the clocks and only runs
/// what is due, so an early wake-up from Dispatch never starts a timer early.
final class DispatchTimerQueue: Sendable {
    private struct State {
        var monotonic = IndexedHeap<QueueTimer>()
        var wall = IndexedHeap<QueueTimer>()
        var sequence: UInt64 = 0
        var armedMonotonic: Int64?
        var armedWall: Int64?
    }

    private let queue: DispatchQueue
    private let runsSerially: Bool
    private let state = LockedValue(State())
    // Dispatch sources are thread-safe (their API is meant for use from any thread); the Swift
    // type is only not marked Sendable on Linux.
    nonisolated(unsafe) private let monotonicSource: any DispatchSourceTimer
    nonisolated(unsafe) private let wallSource: any DispatchSourceTimer

    init(queue: DispatchQueue, runsSerially: Bool) {
        self.queue = queue
        self.runsSerially = runsSerially
        monotonicSource = DispatchSource.makeTimerSource(queue: queue)
        wallSource = DispatchSource.makeTimerSource(queue: queue)
        monotonicSource.setEventHandler { [weak self] in self?.fire() }
        wallSource.setEventHandler { [weak self] in self?.fire() }
        monotonicSource.resume()
        wallSource.resume()
    }

    deinit {
        monotonicSource.cancel()
        wallSource.cancel()
    }

    /// Adds a one-shot timer due at `deadline` on the monotonic clock, or on the wall clock
    /// (nanoseconds since 1970) when `wall` is true. `Nanoseconds.never` stays pending until disposed.
    func schedule(
        deadline: Int64,
        wall: Bool,
        owner: any Scheduler,
        _ action: @escaping @Sendable () -> Void
    ) -> any Disposable {
        let timer = QueueTimer(timers: self, owner: owner, deadline: deadline, wall: wall, action: action)
        state.withLock { state in
            timer.sequence = state.sequence
            state.sequence &+= 1
            if wall { state.wall.insert(timer) } else { state.monotonic.insert(timer) }
            arm(&state)
        }
        return timer
    }

    func remove(_ timer: QueueTimer) {
        // The removed entry has no closure left (its disposer released it), so no user code runs
        // under the lock when the heap drops it.
        state.withLock { state in
            if timer.wall { state.wall.remove(timer) } else { state.monotonic.remove(timer) }
        }
    }

    /// Re-arms a source whose earliest deadline moved earlier than what it is armed for (or that
    /// is not armed). A later earliest deadline (the first timer was disposed) keeps the old arming:
    /// one wake-up for nothing beats a re-arm per cancel.
    private func arm(_ state: inout State) {
        if let first = state.monotonic.first, first.deadline != Nanoseconds.never,
            state.armedMonotonic.map({ first.deadline < $0 }) ?? true
        {
            state.armedMonotonic = first.deadline
            let remaining = max(0, Nanoseconds.subtracting(first.deadline, Nanoseconds.monotonicNow()))
            monotonicSource.schedule(
                deadline: .now() + .nanoseconds(Int(remaining)),
                repeating: .never,
                leeway: .nanoseconds(0)
            )
        }
        if let first = state.wall.first, first.deadline != Nanoseconds.never,
            state.armedWall.map({ first.deadline < $0 }) ?? true
        {
            state.armedWall = first.deadline
            // A past date (down to `distantPast`, saturated) is "now": Dispatch is not handed a
            // negative timespec.
            let wallDeadline = max(first.deadline, Nanoseconds.wallNow())
            wallSource.schedule(wallDeadline: Self.wallTime(wallDeadline), repeating: .never, leeway: .nanoseconds(0))
        }
    }

    /// Pops what is due on either clock, in heap order, and runs it: in this handler, in order, on a
    /// serial queue; as separate blocks on a concurrent one.
    private func fire() {
        let due: [QueueTimer] = state.withLock { state in
            var due: [QueueTimer] = []
            let monotonicNow = Nanoseconds.monotonicNow()
            while let first = state.monotonic.first, first.deadline <= monotonicNow {
                due.append(state.monotonic.removeFirst()!)
            }
            if !state.wall.isEmpty {
                let wallNow = Nanoseconds.wallNow()
                while let first = state.wall.first, first.deadline <= wallNow {
                    due.append(state.wall.removeFirst()!)
                }
            }
            state.armedMonotonic = nil
            state.armedWall = nil
            arm(&state)
            return due
        }
        if runsSerially {
            for timer in due { timer.run() }
        } else {
            for timer in due { queue.async { timer.run() } }
        }
    }

    /// A Dispatch wall time; never before 1970, which Dispatch cannot take (callers clamp past
    /// deadlines to now or to their grid first).
    static func wallTime(_ nanosecondsSinceEpoch: Int64) -> DispatchWallTime {
        let nanosecondsSinceEpoch = max(0, nanosecondsSinceEpoch)
        let seconds = nanosecondsSinceEpoch / 1_000_000_000
        let nanoseconds = nanosecondsSinceEpoch % 1_000_000_000
        return DispatchWallTime(timespec: timespec(tv_sec: Int(seconds), tv_nsec: Int(nanoseconds)))
    }
}

/// One entry of a ``DispatchTimerQueue``: the heap entry and the returned disposable.
// `deadline`, `sequence` and `heapIndex` are only touched under the timer queue's mutex; the
// closure is owned through the `ActionLifecycle` state machine.
final class QueueTimer: IndexedHeapEntry, Disposable, @unchecked Sendable {
    private let timers: DispatchTimerQueue
    private let owner: any Scheduler
    let deadline: Int64
    let wall: Bool
    var sequence: UInt64 = 0
    var heapIndex = -1
    private let state = Atomic<UInt8>(ActionLifecycle.pending)
    private var action: (@Sendable () -> Void)?

    init(
        timers: DispatchTimerQueue,
        owner: any Scheduler,
        deadline: Int64,
        wall: Bool,
        action: @escaping @Sendable () -> Void
    ) {
        self.timers = timers
        self.owner = owner
        self.deadline = deadline
        self.wall = wall
        self.action = action
    }

    var isDisposed: Bool { ActionLifecycle.isDisposed(state) }

    func dispose() {
        guard ActionLifecycle.dispose(state) == .wasPending else { return }
        action = nil
        timers.remove(self)
    }

    func run() {
        guard ActionLifecycle.claimRun(state) else { return }
        let action = self.action.take()
        if let action { CurrentScheduler.withCurrent(owner, action) }
    }
}
