/// Swift concurrency on virtual time: one virtual time for callbacks and async code (<doc:Concurrency>, rule 12 of <doc:BehaviourContract>).
///
/// A job enqueued on the test scheduler becomes an action at the current virtual time, so
/// ``TestScheduler/advance(by:)``, ``TestScheduler/step()`` and ``TestScheduler/run()`` run it, on
/// the calling thread, in virtual-time order with everything else — including jobs enqueued by what
/// they run and tasks resumed by its timers — until nothing is due at the target time:
///
/// ```swift
/// let test = TestScheduler()
/// let task = Task(executorPreference: test) {
///     try await test.sleep(for: .seconds(5))
///     return "done"
/// }
/// test.advance(by: .seconds(5))   // the task has finished when this returns: no yields, no polling
/// ```
///
/// Only tasks that run on it are driven this way: a task on the global pool that awaits
/// `test.sleep` is woken deterministically, but runs on when the pool gets to it — unless
/// ``TestScheduler/drive(_:)`` took it in (a task its body's code started): then its jobs come
/// here too.
extension TestScheduler: SerialExecutor, TaskExecutor, ActorJobRunner {
    /// Queues the job of a task that prefers this scheduler as an action at the current virtual
    /// time; it runs inside the next `advance`/`step`/`run`. Actors enqueue on
    /// ``asUnownedSerialExecutor()``'s executor instead (the same queue; see ``QueueScheduler``'s
    /// executor discussion for why there are two objects).
    public func enqueue(_ job: consuming ExecutorJob) {
        EnqueueProbe.record(self)
        let job = UnownedJob(job)
        // Nil unless a `drive` runs or took tasks in: then the scope notes the job's task (so the
        // tasks it starts join) and marks the job's start.
        let scope = TaskCapture.noteJob(job, on: self)
        // Unowned: the entry only runs inside `advance`/`step`/`run` on this scheduler, and the
        // scheduler's deinit removes it without running it.
        scheduleJob(of: GlobalEnqueueHook.taskID(of: job)) { [unowned self] in
            TaskCapture.jobStarts(in: scope)
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }

    package func enqueueActorJob(_ job: UnownedJob, executor: ActorExecutor) {
        let scope = TaskCapture.noteJob(job, on: self)
        // Unowned for the same reason; the actor executor lives as long as the scheduler.
        scheduleJob(of: GlobalEnqueueHook.taskID(of: job)) { [unowned executor] in
            TaskCapture.jobStarts(in: scope)
            job.runSynchronously(on: executor.asUnownedSerialExecutor())
        }
    }

    package var isolationDescription: String { "TestScheduler" }

    /// The explicit current scheduler: virtual time runs its work on whichever thread calls
    /// `advance`/`step`/`run`, so there is no thread or queue to check. Drive one test scheduler
    /// from one thread at a time (as tests do); two threads advancing it at once could run two
    /// jobs of one actor at once.
    package var isIsolatingItsContext: Bool { isRunningItsWork }

    /// The test scheduler's executor for actors: pin an actor to virtual time by returning this
    /// from its `unownedExecutor`.
    public func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        actorExecutor.asUnownedSerialExecutor()
    }

    /// The scheduler as a task's preferred executor.
    public func asUnownedTaskExecutor() -> UnownedTaskExecutor {
        UnownedTaskExecutor(ordinary: self)
    }

    /// Stops the program unless the caller runs one of this scheduler's actions or jobs.
    public func checkIsolated() {
        if !isRunningItsWork {
            fatalError("TestScheduler.checkIsolated(): not running on the TestScheduler (expected one of its actions or jobs)")
        }
    }

    /// True inside this scheduler's actions and jobs.
    public func isIsolatingCurrentContext() -> Bool? {
        isRunningItsWork
    }
}
