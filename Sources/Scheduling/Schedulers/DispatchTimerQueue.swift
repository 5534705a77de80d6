import Dispatch
import Foundation

/// The timers of a Dispatch-backed scheduler, one-shot and periodic: its own heaps ordered by
/// `(deadline, scheduling order)`, one per clock, each woken by one `DispatchSourceTimer`. The
/// monotonic heap has a ``TimerWheel`` in front of it (``WheeledHeap``, as the loop engine's
/// store): a timer due beyond the next millisecond tick waits in a wheel bucket, inserted and
/// cancelled in O(1), and reaches the heap with its sequence a tick before it can be due, so it
/// fires in the same order.
///
/// Dispatch's own `asyncAfter` does not start equal deadlines in the order they were scheduled
/// (its timers coalesce by leeway), and it keeps a cancelled block until its deadline. Here equal
/// deadlines keep their order, one-shot and periodic alike (rule 4.3); disposing removes the
/// entry from the heap and releases its closure at once; and the sources fire with zero leeway.
/// Each fire re-reads the clocks and only runs what is due, so an early wake-up from Dispatch
/// never starts a timer early.
///
/// A periodic timer is one heap entry, re-inserted after each tick with the next deadline of its
/// ``PeriodicGrid`` (missed grid points are skipped, never run back to back), as the loop engine
/// does. It is re-inserted only once its tick has returned, so its ticks never overlap, even on a
/// concurrent queue. An `at:` periodic timer waits for its first tick in the wall-clock heap; from
/// that tick on its grid is monotonic.
package final class DispatchTimerQueue: Sendable {
    private struct State: ~Copyable {
        /// A heap for what is due within a tick, a timing wheel in front of it for the rest (the
        /// store the LoopScheduler uses): far timeouts are inserted and cancelled in O(1).
        var monotonic = WheeledHeap<QueueTimer>(
            tickShift: WheeledHeap<QueueTimer>.defaultTickShift,
            shrinksOnRemoval: true
        )
        var wall = IndexedHeap<QueueTimer>()
        var sequence: UInt64 = 0
        var armedMonotonic: Int64?
        var armedWall: Int64?
        #if DEBUG
        /// When debug builds check the heaps' and the wheel's invariants (in ``arm(_:)``).
        var sampler = InvariantSampler()
        #endif
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
        // Every entry holds this queue, so the heaps are empty by now.
        monotonicSource.cancel()
        wallSource.cancel()
    }

    /// Adds a one-shot timer due at `deadline` on the monotonic clock, or on the wall clock
    /// (nanoseconds since 1970) when `wall` is true. `Nanoseconds.never` stays pending until disposed.
    func schedule(
        deadline: Int64,
        wall: Bool,
        leeway: Int64 = 0,
        owner: any Scheduler,
        _ action: __owned @escaping @Sendable () -> Void
    ) -> QueueTimer {
        add(QueueTimer(timers: self, owner: owner, deadline: deadline, wall: wall, leeway: leeway, action: consume action))
    }

    /// Moves a one-shot timer that waits in a heap or the wheel to the deadline `newDeadline` gives
    /// for its clock (its own: monotonic or wall), keeping its sequence; false if it is not
    /// waiting (disposed, or popped to run: running or done).
    func rearm(_ timer: QueueTimer, to newDeadline: (_ isWall: Bool) -> Int64) -> Bool {
        state.withLock { state in
            guard timer.heapIndex != -1, timer.grid == nil, !timer.isDisposed else { return false }
            let deadline = newDeadline(timer.isWall)
            if timer.isWall {
                state.wall.remove(timer)
                timer.deadline = deadline
                state.wall.insert(timer)
            } else {
                state.monotonic.rearm(timer, to: deadline)
            }
            arm(&state)
            return true
        }
    }

    /// Adds a periodic timer whose first tick is due at `deadline` (monotonic, or wall when `wall`
    /// is true) and whose later ticks follow the grid `deadline + k·interval`.
    func schedulePeriodic(
        deadline: Int64,
        wall: Bool,
        interval: Int64,
        leeway: Int64,
        owner: any Scheduler,
        _ action: __owned @escaping @Sendable () -> Void
    ) -> any Disposable {
        let timer = QueueTimer(
            timers: self,
            owner: owner,
            deadline: deadline,
            wall: wall,
            grid: PeriodicGrid(origin: deadline, interval: interval),
            leeway: leeway,
            action: consume action
        )
        return add(timer)
    }

    /// Timers in the heaps: pending one-shot timers and periodic timers between ticks (a periodic
    /// timer whose tick is running is out of the heap until the tick returns). For tests.
    package var pendingCount: Int {
        state.withLock { $0.monotonic.count + $0.wall.count }
    }


    private func add(_ timer: QueueTimer) -> QueueTimer {
        state.withLock { state in
            Self.insert(timer, into: &state)
            arm(&state)
        }
        return timer
    }

    private static func insert(_ timer: QueueTimer, into state: inout State) {
        timer.sequence = state.sequence
        state.sequence &+= 1
        if timer.isWall { state.wall.insert(timer) } else { state.monotonic.insert(timer, sequence: timer.sequence) }
    }

    func remove(_ timer: QueueTimer) {
        // The removed entry has no closure left (its disposer released it), so no user code runs
        // under the lock when the heap drops it.
        state.withLock { state in
            if timer.isWall {
                state.wall.remove(timer)
            } else {
                state.monotonic.remove(timer)
                // Everything cancelled: a burst's wheel buckets go back too (the heap shrinks by
                // itself as it empties).
                if state.monotonic.isEmpty && state.monotonic.capacity > 0 { state.monotonic.shrink(keeping: 1024) }
            }
        }
    }

    /// Re-arms a source whose wake-up (``TimerWake``: leeway coalescing, the wheel's next bucket)
    /// is not served by its arming. A later target (the first timer was disposed) keeps the old
    /// arming: one wake-up for nothing beats a re-arm per cancel.
    private func arm(_ state: inout State) {
        #if DEBUG
        // After every change, under the lock: every deadline was written here, and filed at once
        // (or later in place, in the wheel), so none may be filed later than it is due.
        state.monotonic.assertSound(
            with: state.wall,
            sampler: &state.sampler,
            mayAwaitRearm: { _ in false },
            owner: "DispatchTimerQueue"
        )
        #endif
        if state.monotonic.nextAdvance < state.armedMonotonic ?? .max {
            // The wheel would set the wake-up: hand it what is due soon first, so a lone timer
            // wakes the source once, at its deadline, not a tick early as well.
            let now = Nanoseconds.monotonicNow()
            state.monotonic.advance(monotonicNow: now, beforeSleeping: true)
        }
        if let wake = state.monotonic.wake, !wake.isServed(byArmed: state.armedMonotonic) {
            state.armedMonotonic = wake.target
            let remaining = max(0, Nanoseconds.subtracting(wake.target, Nanoseconds.monotonicNow()))
            monotonicSource.schedule(
                deadline: .now() + .nanoseconds(Int(remaining)),
                repeating: .never,
                leeway: .nanoseconds(0)
            )
        }
        if let wake = state.wall.wake, !wake.isServed(byArmed: state.armedWall) {
            state.armedWall = wake.target
            // A past date (down to `distantPast`, saturated) is "now": Dispatch is not handed a
            // negative timespec.
            let wallDeadline = max(wake.target, Nanoseconds.wallNow())
            wallSource.schedule(wallDeadline: Self.wallTime(wallDeadline), repeating: .never, leeway: .nanoseconds(0))
        }
    }

    /// Pops what is due on either clock, in heap order, and runs it: in this handler, in order, on a
    /// serial queue; as separate blocks on a concurrent one. Periodic timers re-inserted by these
    /// runs wait for the next fire, so one that keeps re-arming cannot starve the others.
    private func fire() {
        let due: [QueueTimer] = state.withLock { state in
            var due: [QueueTimer] = []
            let monotonicNow = Nanoseconds.monotonicNow()
            state.monotonic.advance(monotonicNow: monotonicNow)
            while let first = state.monotonic.heap.firstKey, first.deadline <= monotonicNow {
                due.append(state.monotonic.heap.removeFirst()!)
            }
            if !state.wall.isEmpty {
                let wallNow = Nanoseconds.wallNow()
                while let first = state.wall.firstKey, first.deadline <= wallNow {
                    let timer = state.wall.removeFirst()!
                    timer.leaveWallClock(wallNow: wallNow, monotonicNow: monotonicNow)
                    due.append(timer)
                }
            }
            state.armedMonotonic = nil
            state.armedWall = nil
            arm(&state)
            return due
        }
        if runsSerially {
            for timer in due { run(timer) }
        } else {
            for timer in due { queue.async { self.run(timer) } }
        }
    }

    /// Runs a popped timer; a periodic one still active after its tick goes back into the heap at
    /// its next grid point after now.
    private func run(_ timer: QueueTimer) {
        guard timer.grid != nil else {
            timer.runOnce(as: timer.owner)
            return
        }
        guard timer.runTick(as: timer.owner) else { return }
        let now = Nanoseconds.monotonicNow()
        state.withLock { state in
            // A dispose that won after the tick ended has released the closure and tried to remove
            // the entry before it was back in the heap: it must not go back. A dispose that comes
            // later finds it in the heap and removes it (both hold this lock).
            guard !timer.isDisposed else { return }
            timer.advance(after: now)
            Self.insert(timer, into: &state)
            arm(&state)
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
