import Foundation

extension DateScheduler {
    /// Runs `operation` with a deadline on this scheduler's timer: the "timeout per request,
    /// nearly all cancelled" pattern.
    ///
    /// ```swift
    /// let row = try await loop.withTimeout(.seconds(2)) { try await database.fetch(id) }
    /// ```
    ///
    /// `operation` runs in a child task (it inherits the caller's task executor preference and
    /// priority) next to one timer; no second task races it. A caller without a task executor
    /// preference starts the child at once on its own thread, where it runs until it first
    /// suspends (the runtime's immediate child tasks, Swift 6.2 and later): an operation that
    /// finishes without suspending costs no thread hand-off, and after a suspension it resumes on
    /// its executor as any child task does. A caller with a preference starts the child on that
    /// executor (on a `LoopScheduler`, the same thread, through its local queue).
    /// - If `operation` finishes first, the timer is disposed (its handler released at once, its
    ///   entry dropped by the scheduler at once or, on a `LoopScheduler` from another thread,
    ///   within 10 ms, without waking the loop for it) and its result is returned, or its error
    ///   thrown.
    /// - If the timer fires first, the child is cancelled and awaited, and ``TimeoutError`` is
    ///   thrown, whatever the operation then returned: nothing outlives the call.
    ///
    /// - If the scheduler shuts down first (a `LoopScheduler`), the child is cancelled and awaited,
    ///   and ``SchedulerShutdownError`` is thrown, whatever the operation then returned; after the
    ///   shutdown, a call cancels the child as it starts and throws the same error.
    ///
    /// The caller's task is never cancelled by it; cancelling the caller cancels the child (which
    /// ends as `operation` reacts to cancellation; its error is thrown).
    ///
    /// - Throws: ``TimeoutError`` when the timer fired first, or at once, without starting
    ///   `operation`, when `timeout` is not positive; ``SchedulerShutdownError`` when the scheduler
    ///   shut down before the operation finished; otherwise whatever `operation` throws.
    /// - Note: an operation that ignores cancellation delays the ``TimeoutError`` until it returns.
    ///   The operation finishing and the timer firing at the same moment: whichever claims the race
    ///   first wins (the operation, once it has returned, always beats a later timer).
    nonisolated(nonsending)
        public func withTimeout<T: Sendable>(
            _ timeout: Duration,
            _ operation: @escaping @Sendable () async throws -> T
        ) async throws -> T
    {
        guard timeout > .zero else { throw TimeoutError(timeout: timeout) }
        let race = TimeoutRace()
        let timer = schedule(after: timeout, leeway: .zero, handler: race)
        // Not a closure literal: the group would give a literal the caller's actor isolation, and
        // the operation (nonisolated) would then start with a hop off it.
        let child: @Sendable () async -> Result<T, any Error> = {
            do {
                return .success(try await race.run(operation))
            } catch {
                return .failure(error)
            }
        }
        let outcome: Result<T, any Error>
        if #available(macOS 26.0, iOS 26.0, watchOS 26.0, tvOS 26.0, visionOS 26.0, *),
            !withUnsafeCurrentTask(body: { $0?.unownedTaskExecutor != nil })
        {
            // Without an executor preference an `async let` child would start on the global pool,
            // a thread hand-off each way. This one starts on this thread and runs until it first
            // suspends: a quick operation is done before the caller awaits it. (With a preference
            // the `async let` child starts on that executor — on a loop, the same thread — which
            // measured cheaper than a task group.)
            outcome = await withTaskGroup(of: Result<T, any Error>.self) { group in
                group.addImmediateTask(operation: child)
                return await group.next()!
            }
        } else {
            async let result = child()
            outcome = await result
        }
        switch race.outcome {
        case .completedFirst: break
        case .timedOut: throw TimeoutError(timeout: timeout)
        case .schedulerShutDown: throw SchedulerShutdownError()
        }
        timer.dispose()
        return try outcome.get()
    }
}

/// The race between an operation's child task and its timer: the timer's handler, and the slot
/// through which the timer cancels the child.
///
/// The child registers its task when it starts and deregisters it as it ends, both under the lock;
/// the timer cancels it under the same lock, so it never touches a task that has finished.
// `child` is only touched under `locked`'s lock; `UnsafeCurrentTask` is valid between the child's
// registration and deregistration, and `cancel()` is only called in between.
final class TimeoutRace: SchedulerTimerHandler, @unchecked Sendable {
    private struct Locked {
        var child: UnsafeCurrentTask?
        /// The deadline passed before the operation ended.
        var timedOut = false
        /// The scheduler shut down (disposing the timer) before the operation ended.
        var shutDown = false
        /// The child is to be cancelled (at its registration, if it has not started yet).
        var cancelRequested = false
        var operationEnded = false
    }

    private let locked = LockedValue(Locked())

    /// Runs `operation` as the child, registered for cancellation by the timer.
    func run<T: Sendable>(_ operation: @Sendable () async throws -> T) async throws -> T {
        withUnsafeCurrentTask { task in
            let cancelled = locked.withLock { state -> Bool in
                if state.cancelRequested { return true }
                state.child = task
                return false
            }
            if cancelled { task?.cancel() }
        }
        defer {
            locked.withLock { state in
                state.child = nil
                state.operationEnded = true
            }
        }
        return try await operation()
    }

    enum Outcome {
        case completedFirst, timedOut, schedulerShutDown
    }

    /// Whether the operation ended before the timer fired or the scheduler shut down; after this,
    /// the timer loses.
    var outcome: Outcome {
        locked.withLock { state in
            state.operationEnded = true
            return state.timedOut ? .timedOut : state.shutDown ? .schedulerShutDown : .completedFirst
        }
    }

    func timerFired() {
        cancelChild(asTimeout: true)
    }

    /// The scheduler shut down before the deadline: the child is cancelled, and the caller gets
    /// ``SchedulerShutdownError`` rather than a ``TimeoutError`` for a deadline that never came, or
    /// a `CancellationError` it cannot tell from its own cancellation.
    func timerCancelledByScheduler() {
        cancelChild(asTimeout: false)
    }

    private func cancelChild(asTimeout: Bool) {
        // Cancelling runs the child's cancellation handlers here, under the lock: they must not
        // wait for the child to end (the child's deregistration takes this lock).
        locked.withLock { state in
            guard !state.operationEnded else { return }
            if asTimeout { state.timedOut = true } else { state.shutDown = true }
            state.cancelRequested = true
            state.child?.cancel()
        }
    }
}
