import Foundation
import Synchronization

extension DateScheduler {
    /// Suspends the calling task for `duration` on this scheduler's timer.
    ///
    /// It never resumes early (rule 4 of the behaviour contract: no earlier than `duration` after
    /// the call, by the scheduler's monotonic clock, virtual on ``TestScheduler``), and up to
    /// `leeway` late. Only the wake-up comes from the scheduler: the task resumes on its own
    /// executor (its actor, its task executor preference, or the global pool). See the
    /// Concurrency article.
    ///
    /// - Throws: `CancellationError` if the task is cancelled before the timer fired: at once when
    ///   it was already cancelled (nothing is scheduled), otherwise as soon as it is cancelled, the
    ///   timer being disposed at that moment (the scheduler releases it, rule 1).
    ///   ``SchedulerShutdownError`` when the scheduler shuts down while the task sleeps, or at once
    ///   when it had shut down before the call (a `LoopScheduler`): the task is never left
    ///   suspended, and it can tell a shutdown from its own cancellation.
    /// - Note: cancellation racing the deadline: whichever comes first wins; a sleep whose timer
    ///   fired returns normally even if the task is cancelled a moment later.
    /// - Precondition: `leeway` is not negative (stops the program otherwise, rule 9).
    nonisolated(nonsending)
        public func sleep(for duration: Duration, leeway: Duration = .zero) async throws
    {
        BadInput.checkLeeway(leeway, method: "\(BadInput.typeName(self)).sleep(for:leeway:)")
        try await SchedulerSleep.sleep { schedule(after: duration, leeway: leeway, handler: $0) }
    }

    /// Suspends the calling task until the scheduler's wall clock reaches `date` (``DateScheduler/now``, virtual
    /// on ``TestScheduler``); never earlier, up to `leeway` later. A past date resumes as soon as
    /// possible. Cancellation and shutdown as in ``sleep(for:leeway:)``: `CancellationError` or
    /// ``SchedulerShutdownError``.
    ///
    /// - Precondition: `date` is finite and `leeway` is not negative (stops the program otherwise).
    nonisolated(nonsending)
        public func sleep(until date: Date, leeway: Duration = .zero) async throws
    {
        if !date.timeIntervalSinceReferenceDate.isFinite {
            BadInput.checkDate(date, method: "\(BadInput.typeName(self)).sleep(until:leeway:)", parameter: "until")
        }
        BadInput.checkLeeway(leeway, method: "\(BadInput.typeName(self)).sleep(until:leeway:)")
        try await SchedulerSleep.sleep { schedule(at: date, leeway: leeway, handler: $0) }
    }
}

/// One sleep: the timer's handler, the continuation's holder and the cancellation state in one
/// object, so a sleep costs this object and the scheduler's timer entry, no closures of its own.
///
/// The state is a set of bits, each set once:
/// - `armed`: the continuation is stored (the timer is being scheduled);
/// - `done`: someone claimed the continuation (the timer, the scheduler's shutdown, or `cancel`);
/// - `stored`: the timer's disposable is stored;
/// - `cancelled`: the task was cancelled.
///
/// Whoever sets `done` first resumes the continuation, exactly once. The disposable is disposed by
/// `cancel` if it was stored when `cancel` came, otherwise by `start` when it stores it: the
/// `fetchOr`s on one atomic are totally ordered, so exactly one of them sees the other.
// `continuation` is written before `armed` is published and read only by the winner of `done`;
// `timer` is written before `stored` is published and read only by `cancel` after it saw `stored`.
final class SchedulerSleep: SchedulerTimerHandler, @unchecked Sendable {
    private static let armed: UInt8 = 1
    private static let done: UInt8 = 2
    private static let stored: UInt8 = 4
    private static let cancelled: UInt8 = 8

    private let state = Atomic<UInt8>(0)
    private var continuation: UnsafeContinuation<Void, any Error>?
    private var timer: (any Disposable)?

    /// Sleeps on the timer `arm` schedules with the sleeper as its handler.
    nonisolated(nonsending)
        static func sleep(_ arm: (SchedulerSleep) -> any Disposable) async throws
    {
        try Task.checkCancellation()
        let sleeper = SchedulerSleep()
        try await withTaskCancellationHandler {
            try await withUnsafeThrowingContinuation { (continuation: UnsafeContinuation<Void, any Error>) in
                sleeper.start(continuation, arm)
            }
        } onCancel: {
            sleeper.cancel()
        }
    }

    private func start(_ continuation: UnsafeContinuation<Void, any Error>, _ arm: (SchedulerSleep) -> any Disposable) {
        self.continuation = continuation
        let before = state.bitwiseOr(Self.armed, ordering: .acquiringAndReleasing).oldValue
        if before & Self.cancelled != 0 {
            // Cancelled before the continuation existed: `cancel` left the resume to us.
            state.bitwiseOr(Self.done, ordering: .acquiringAndReleasing)
            self.continuation = nil
            continuation.resume(throwing: CancellationError())
            return
        }
        let timer = arm(self)
        self.timer = timer
        if state.bitwiseOr(Self.stored, ordering: .acquiringAndReleasing).oldValue & Self.cancelled != 0 {
            timer.dispose()  // `cancel` came before the disposable was here to dispose
        }
    }

    func cancel() {
        let before = state.bitwiseOr(Self.cancelled, ordering: .acquiringAndReleasing).oldValue
        guard before & Self.armed != 0, before & Self.done == 0 else { return }
        if before & Self.stored != 0, let timer { timer.dispose() }
        resume(throwing: CancellationError())
    }

    func timerFired() {
        resume(throwing: nil)
    }

    func timerCancelledByScheduler() {
        resume(throwing: SchedulerShutdownError())
    }

    /// Resumes the continuation if this call is the first to claim it.
    private func resume(throwing error: (any Error)?) {
        guard state.bitwiseOr(Self.done, ordering: .acquiringAndReleasing).oldValue & Self.done == 0 else { return }
        let continuation = self.continuation.take()!
        if let error { continuation.resume(throwing: error) } else { continuation.resume() }
    }
}
