import Foundation
import Synchronization

extension TestScheduler {
    /// Runs `body` on this scheduler, with everything it makes ready and every task its code
    /// starts, at the current virtual time, and returns its result: the way a test awaits an actor
    /// pinned to the scheduler, or any async code that runs on it, without hanging.
    ///
    /// ```swift
    /// let test = TestScheduler()
    /// let sessions = Sessions(on: test)                        // an actor pinned to `test`
    /// try await test.drive { await sessions.open(id: 1) }
    /// test.advance(by: .seconds(30))                           // the idle timer expires
    /// #expect(try await test.drive { await sessions.isOpen(1) } == false)
    /// ```
    ///
    /// `body` runs in a task that prefers this scheduler, so its jobs, the jobs of actors pinned to
    /// the scheduler it calls, and tasks its timers resume all run on the calling thread, inside
    /// this call, in virtual-time order. `drive` never moves the clock by itself: advance it
    /// between `drive` calls, or from `body` itself (`test.advance(by:)` runs what falls due, and
    /// `body` goes on at the new time) — not from inside a method of an actor pinned to the
    /// scheduler, whose next job could then run inside its current one.
    ///
    /// **Tasks the body starts.** `drive` takes in every task the body's code starts, however deep
    /// in a library: a plain `Task {}` or `Task.detached {}` (swift-async-algorithms' `debounce`
    /// starts one), the child tasks of those, and the tasks they start in turn. Their jobs run on
    /// this scheduler instead of the global pool, so `advance(by:)`, `advance(to:)`, `run()` and
    /// `drive` return only when everything ready or due at the new time has run, theirs included:
    /// no yields, no polling, no real waiting. They stay on the scheduler until they finish, also
    /// after `drive` returned, and are driven by whichever `advance` or `drive` comes next. Work
    /// outside the scope is untouched: tasks that the test's own code starts outside `drive`, and
    /// the tests running beside it in the process.
    ///
    /// When `body` cannot finish because nothing on the scheduler is ready — it awaits a sleep or a
    /// timer that needs `advance`, or work outside the scheduler (the main actor, a Dispatch
    /// callback, I/O) — `drive` cancels its task, runs what the cancellation makes ready (a
    /// cancelled sleep throws at once), and throws ``TestSchedulerStall``, which says what is
    /// pending and when the next action is due. It never waits in real time. It cancels the body
    /// only: the unstructured tasks it took in are not cancelled, and stay on the scheduler.
    ///
    /// Without `drive`, awaiting an actor pinned to a test scheduler from the test's own task hangs
    /// silently: nothing runs the actor's job until someone advances the scheduler, and the test's
    /// task is the one waiting. The same holds for a task `drive` took in: await its result inside
    /// `drive` (`try await test.drive { await task.value }`).
    ///
    /// **A task that never lets the clock move.** A task on the scheduler (the body, a task that
    /// prefers the scheduler, an actor pinned to it) that loops on `Task.yield()` — polling for
    /// something only a later virtual time brings — is always ready, so the scheduler never runs
    /// out of work at the current time. After 1,000,000 actions in a row at one virtual instant,
    /// `drive` cancels its body and throws ``TestSchedulerSpin``, naming the task; the spinning
    /// task stays on the scheduler. (``advance(by:)`` stops the program there instead.)
    ///
    /// - Important: What stays outside virtual time, even inside `drive` (see the Testing article):
    ///   - A plain `Task.sleep` (or a `ContinuousClock`/`SuspendingClock` sleep) in any task sleeps
    ///     in real time: the runtime serves its wake-up on the global pool, where no hook sees it.
    ///     The task goes on only at the next `advance` or `drive` after its real deadline — if the
    ///     body waits on it, `drive` throws ``TestSchedulerStall`` naming this. Sleep on the
    ///     scheduler (`test.sleep`, `test.clock`) instead.
    ///   - Work from other threads — a Dispatch callback, I/O, a loop — arrives in real time: a
    ///     task it resumes runs at the next `advance` or `drive` after it arrived.
    ///   - Tasks left with work pending when the test ends: if the scheduler is released, their
    ///     queued jobs are dropped unrun (the tasks never finish), and their later wake-ups go to the
    ///     global pool.
    ///   - Tasks are taken in through the runtime's one global-enqueue hook, installed by the first
    ///     `drive` of the process and chained to the hook that was there (SwiftNIO's global
    ///     executor takeover, for one). A hook installed after it replaces it — swift-concurrency-
    ///     extras' `withMainSerialExecutor` while its body runs, a SwiftNIO takeover started later —
    ///     and then `drive` throws ``TestSchedulerHookConflict`` rather than run the body with
    ///     plain tasks on the global pool. Once that hook is gone (the slot emptied, or given back
    ///     to the hook `drive` had chained to), the next `drive` installs its own again.
    ///   - Drive one scheduler from one thread at a time, as tests do.
    /// - Throws: ``TestSchedulerHookConflict`` when another global-enqueue hook holds the slot (the
    ///   body did not run); ``TestSchedulerStall`` when `body` cannot finish at the current virtual
    ///   time; ``TestSchedulerSpin`` when the scheduler's work keeps the clock at one instant;
    ///   otherwise what `body` throws.
    @discardableResult
    public func drive<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) async throws -> T {
        let scope = try TaskCapture.beginDrive(on: self)
        defer { TaskCapture.endDrive(scope) }
        let outcome = Mutex<Result<T, any Error>?>(nil)
        let task = Task(executorPreference: self) {
            TaskCapture.joinCurrentTask(scope)
            do {
                let value = try await body()
                outcome.withLock { $0 = .success(value) }
            } catch {
                outcome.withLock { $0 = .failure(error) }
            }
        }
        // Made as the drive began: its id bounds every task that existed then (none may join).
        TaskCapture.seed(scope, from: task)
        try runReady(cancelling: task)
        if let result = outcome.withLock({ $0 }) { return try result.get() }
        let pendingCount = pendingCount
        let nextDeadline = nextDeadline
        let now = virtualNanoseconds
        task.cancel()
        try runReady(cancelling: task)
        throw TestSchedulerStall(
            now: Nanoseconds.date(sinceEpoch: now),
            pendingCount: pendingCount,
            nextDueDate: nextDeadline.map(Nanoseconds.date(sinceEpoch:)),
            bodyEndedWhenCancelled: outcome.withLock { $0 != nil }
        )
    }

    /// Runs everything due at the current virtual time, also what a `drive` body's own `advance`
    /// made due at a later `now`; on a spin, cancels `body` and throws, running nothing more.
    private func runReady(cancelling body: Task<Void, Never>) throws(TestSchedulerSpin) {
        repeat {
            if let spin = runDue() {
                body.cancel()
                throw TestSchedulerSpin(spin)
            }
        } while (nextDeadline.map { $0 <= virtualNanoseconds } ?? false)
    }
}
