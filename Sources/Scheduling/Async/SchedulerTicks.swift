import Foundation

extension DateScheduler {
    /// The ticks of a fixed-rate periodic timer on this scheduler, as an async sequence of tick
    /// indices.
    ///
    /// ```swift
    /// for await tick in loop.ticks(every: .seconds(1)) {
    ///     flush(tick)                      // tick k is due at start + k·1 s
    /// }
    /// ```
    ///
    /// The timer starts when iteration first asks for an element (that moment is the grid's
    /// origin). Tick k, k ≥ 1, is due at origin + k·`period` (rule 5 of the behaviour contract: no
    /// drift). A consumer that
    /// falls behind gets the latest index only: skipped ticks show as gaps in the indices, never as
    /// a burst of old ones.
    ///
    /// The periodic timer is disposed when the iterating task is cancelled (at once while it waits
    /// for a tick, otherwise at its next call), when the iterator is dropped, or when iteration
    /// ends. The sequence ends (`nil`) when the task is cancelled or the scheduler shuts down (also
    /// at the first call when it had shut down before): it cannot throw, so a caller tells the two
    /// apart by `Task.isCancelled` after the loop, where the sleeps throw `CancellationError` or
    /// ``SchedulerShutdownError``.
    ///
    /// - Precondition: `period` is positive and `leeway` is not negative (stops the program
    ///   otherwise, rule 9).
    public func ticks(every period: Duration, leeway: Duration = .zero) -> SchedulerTicks {
        BadInput.checkPositive(period, parameter: "every", method: "\(BadInput.typeName(self)).ticks(every:leeway:)")
        BadInput.checkLeeway(leeway, method: "\(BadInput.typeName(self)).ticks(every:leeway:)")
        return SchedulerTicks(scheduler: self, period: period, leeway: leeway)
    }
}

/// The ticks of a periodic timer: an `AsyncSequence` of tick indices k ≥ 1, made by
/// ``DateScheduler/ticks(every:leeway:)``.
///
/// Each iterator runs its own periodic timer. The scheduler's shutdown reaches the sequence through
/// ``SchedulerTimerHandler/timerCancelledByScheduler()`` of the periodic handler timer
/// (``DateScheduler/schedule(after:repeatingEvery:leeway:handler:)``), after which it ends.
public struct SchedulerTicks: AsyncSequence, Sendable {
    public typealias Element = Int
    public typealias Failure = Never

    /// The scheduler whose timer ticks.
    public let scheduler: any DateScheduler
    /// The grid's interval.
    public let period: Duration
    /// How late a tick may start so wake-ups can be coalesced.
    public let leeway: Duration

    init(scheduler: any DateScheduler, period: Duration, leeway: Duration) {
        self.scheduler = scheduler
        self.period = period
        self.leeway = leeway
    }

    /// A new iterator; its timer starts at its first `next()`.
    public func makeAsyncIterator() -> Iterator {
        Iterator(ticks: self)
    }

    /// Iterates the ticks of one periodic timer. Dropping it disposes the timer.
    public struct Iterator: AsyncIteratorProtocol {
        public typealias Element = Int
        public typealias Failure = Never

        private let ticks: SchedulerTicks
        private var owner: TicksOwner?
        private var ended = false

        init(ticks: SchedulerTicks) {
            self.ticks = ticks
        }

        /// The next tick's index, waiting for it if none is pending; `nil` once the task is
        /// cancelled or the scheduler shut down.
        public mutating func next(isolation actor: isolated (any Actor)? = #isolation) async -> Int? {
            if ended { return nil }
            if owner == nil {
                if Task.isCancelled {
                    ended = true
                    return nil
                }
                owner = TicksOwner(ticks)
            }
            guard let index = await owner!.state.next() else {
                ended = true
                owner = nil
                return nil
            }
            return index
        }

        /// See ``next(isolation:)``.
        public mutating func next() async -> Int? {
            await next(isolation: nil)
        }
    }
}

/// Owned by the iterator alone: dropping it ends the timer (the timer holds only the state).
private final class TicksOwner {
    let state: TicksState

    init(_ ticks: SchedulerTicks) {
        state = TicksState(scheduler: ticks.scheduler, period: ticks.period)
        let timer = ticks.scheduler.schedule(
            after: ticks.period,
            repeatingEvery: ticks.period,
            leeway: ticks.leeway,
            handler: state
        )
        state.attach(timer)
    }

    deinit {
        state.finish()
    }
}

/// The periodic timer's handler and the waiting consumer's slot.
final class TicksState: SchedulerTimerHandler, Sendable {
    private struct Locked {
        /// The latest index produced (0: none yet).
        var produced = 0
        /// The latest index handed to the consumer.
        var delivered = 0
        var waiter: UnsafeContinuation<Int?, Never>?
        var finished = false
        var timer: (any Disposable)?
    }

    // Held unowned: the scheduler's timer holds this state, and it only calls it while alive.
    private unowned let scheduler: any DateScheduler
    private let origin: Int64
    private let period: Int64
    private let locked = LockedValue(Locked())

    init(scheduler: any DateScheduler, period: Duration) {
        self.scheduler = scheduler
        self.origin = scheduler.monotonicNanoseconds
        self.period = Nanoseconds.of(period)
    }

    /// Keeps the timer to dispose, or disposes it at once when the sequence already ended.
    func attach(_ timer: any Disposable) {
        let ended = locked.withLock { state -> Bool in
            if state.finished { return true }
            state.timer = timer
            return false
        }
        if ended { timer.dispose() }
    }

    /// Waits for a tick newer than the last one delivered.
    nonisolated(nonsending)
        func next() async -> Int?
    {
        if Task.isCancelled {
            finish()
            return nil
        }
        return await withTaskCancellationHandler {
            await withUnsafeContinuation { (continuation: UnsafeContinuation<Int?, Never>) in
                let ready = locked.withLock { state -> Int?? in
                    if state.finished { return .some(nil) }
                    if state.produced > state.delivered {
                        state.delivered = state.produced
                        return .some(state.produced)
                    }
                    state.waiter = continuation
                    return .none
                }
                if let ready { continuation.resume(returning: ready) }
            }
        } onCancel: {
            finish()
        }
    }

    func timerFired() {
        // The latest grid point passed: when the scheduler skipped missed ticks, the one tick it
        // runs stands for the latest of them, so the index shows the gap. Never more: after a late
        // tick that already reported the next point, an on-time one reports nothing new rather than
        // an index whose grid point has not come yet (the timer's grid starts a moment after this
        // sequence's origin, so its tick k always finds at least k points passed).
        let passed = Int(PeriodicGrid.pointsPassed(since: origin, interval: period, now: scheduler.monotonicNanoseconds))
        let resume = locked.withLock { state -> (UnsafeContinuation<Int?, Never>, Int)? in
            guard !state.finished else { return nil }
            state.produced = max(passed, state.produced)
            guard state.produced > state.delivered, let waiter = state.waiter.take() else { return nil }
            state.delivered = state.produced
            return (waiter, state.produced)
        }
        if let (waiter, index) = resume { waiter.resume(returning: index) }
    }

    func timerCancelledByScheduler() {
        finish()
    }

    /// Ends the sequence: disposes the timer and wakes the waiting consumer with `nil`. Idempotent.
    func finish() {
        let (waiter, timer) = locked.withLock { state in
            state.finished = true
            return (state.waiter.take(), state.timer.take())
        }
        timer?.dispose()
        waiter?.resume(returning: nil)
    }
}
