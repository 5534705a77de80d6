import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// What ``TestScheduler/drive(_:)`` takes in: the tasks the body's code starts, transitively,
/// plain `Task {}` and `Task.detached {}` included, whose jobs then run on the test scheduler
/// instead of the global pool (Docs/Design.md §8.7).
///
/// **Membership.** A scheduler's scope (``DriveScope``) is a registry of task ids (the runtime's
/// 64-bit ids, from one counter and never reused, so a finished task's address reused by another
/// test's task is no member). `drive`'s body task joins it as it starts. A task joins when it is
/// made ready by a member, or by the scheduler's own work while a `drive` of it runs (a timer's
/// action that starts a task), and its id is above the scope's bound: the highest id seen when the
/// job making it ready started, and at least the id of the current drive's body task, made as the
/// drive began. What that keeps: no task that existed when the drive began joins (the body task's
/// id exceeds all of theirs; ids grow with creation), nor one the hook saw before the current job
/// started. What it cannot keep: a task another test (or thread) creates while the drive runs,
/// after the job started or preferring another executor (so the hook never saw its id), and
/// hands to a member that resumes it — the runtime's id counter is not exported, so nothing
/// tells such a task from one the job created. Task-locals are not used: the runtime's wake-up
/// tasks do not copy them, and many global enqueues (4 in 10 in a probe) have no current task at
/// all (a timer's action run from sync code, a Dispatch thread).
///
/// **Routing.** A member's job bound for the global pool goes through ``GlobalEnqueueHook`` to its
/// scheduler, as an action at the current virtual time, so `advance`, `run` and `drive` run it,
/// on their thread, in order with everything else. Jobs of tasks that prefer the scheduler or of
/// actors pinned to it arrive there anyway; the scope only notes them (``noteJob(_:on:)``), so
/// the tasks they start join too.
///
/// **Identity.** A taken-in job runs as the global pool would run it (generic executor, the global
/// concurrent executor as task executor), not as the scheduler's task executor: the task prefers
/// no executor, so running it on the scheduler's would make each of its hops back to the pool —
/// every call into a nonisolated async function, every return from an actor — one more enqueue.
///
/// **The lock.** Nothing that can release a scheduler, a closure or any user object happens
/// under the registry's lock: a release there runs deinits, and one that enqueues a job (a
/// closure holding the last `AsyncStream.Continuation`) re-enters the hook and the lock on the
/// same thread, a hang. So the lock guards only ids and scopes; weak `scheduler` references are
/// loaded after unlocking; a scope removed (by its scheduler's deinit) is released after
/// unlocking. DEBUG builds check it: `TestScheduler.deinit` stops the program inside the lock.
package enum TaskCapture {
    private struct Registry {
        /// Every member task's scope.
        var members: [UInt64: DriveScope] = [:]
        /// The scope of every live scheduler that has one, with its members' ids.
        var scopes: [ObjectIdentifier: (scope: DriveScope, memberIDs: [UInt64])] = [:]

        /// Adds a new task to `scope` (whose entry is in `scopes`).
        mutating func add(_ taskID: UInt64, to scope: DriveScope) {
            guard members[taskID] == nil else { return }
            members[taskID] = scope
            scopes[scope.key]?.memberIDs.append(taskID)
            TaskCapture.memberCount.store(members.count, ordering: .relaxed)
        }

        /// Forgets the scope of the scheduler `key` and its members; returns the scope for the
        /// caller to release after unlocking.
        mutating func remove(_ key: ObjectIdentifier) -> DriveScope? {
            guard let entry = scopes.removeValue(forKey: key) else { return nil }
            for taskID in entry.memberIDs { members[taskID] = nil }
            TaskCapture.memberCount.store(members.count, ordering: .relaxed)
            return entry.scope
        }
    }

    private static let registry = LockedValue(Registry())
    /// The registry's member count, read without the lock: with no `drive` in progress, 0 makes
    /// the hook pass every job on.
    private static let memberCount = Atomic<Int>(0)
    /// `drive` calls in progress, on any scheduler: a task started by a scheduler's work during one
    /// joins even before any task has.
    private static let activeDrives = Atomic<Int>(0)
    /// Global enqueues that took the registry's lock (for the test that shows the fast path back
    /// once the last scope is gone).
    package static let lockedGlobalEnqueues = Atomic<Int>(0)

    /// Whether no scope can claim a job: the hook's fast path.
    private static var isIdle: Bool {
        memberCount.load(ordering: .relaxed) == 0 && activeDrives.load(ordering: .relaxed) == 0
    }
    /// The highest task id any scope has seen (task ids only grow).
    static let highestSeen = Atomic<UInt64>(0)
    /// The identity taken-in jobs run with: the global pool's.
    private static let globalIdentity = globalConcurrentExecutor.asUnownedTaskExecutor()

    private static func see(_ taskID: UInt64) {
        var seen = highestSeen.load(ordering: .relaxed)
        while taskID > seen {
            let (exchanged, original) = highestSeen.compareExchange(
                expected: seen,
                desired: taskID,
                ordering: .relaxed
            )
            if exchanged { return }
            seen = original
        }
    }

    /// Runs `body` under the registry's lock, marked (in DEBUG builds) as inside it.
    private static func withRegistry<Result>(_ body: (inout Registry) -> Result) -> Result {
        registry.withLock { registry in
            #if DEBUG
            InsideRegistryFlag.set(true)
            defer { InsideRegistryFlag.set(false) }
            #endif
            return body(&registry)
        }
    }

    // MARK: drive's side

    /// The scope of `scheduler`, made on first use; installs the hook (again, if the slot was
    /// emptied or given back to the hook it chains to).
    package static func beginDrive(on scheduler: TestScheduler) throws(TestSchedulerHookConflict) -> DriveScope {
        if case .foreign(let address) = GlobalEnqueueHook.install() {
            throw TestSchedulerHookConflict(hookAddress: address, hookSymbol: GlobalEnqueueHook.symbol(at: address))
        }
        see(GlobalEnqueueHook.currentTaskID)
        let scope = scope(of: scheduler, creating: true)!
        scope.drives.add(1, ordering: .relaxed)
        activeDrives.add(1, ordering: .relaxed)
        return scope
    }

    /// Raises `scope`'s bound to the id of `bodyTask`, the drive's body task, made as it began.
    package static func seed<Success, Failure>(_ scope: DriveScope, from bodyTask: Task<Success, Failure>) {
        let taskID = GlobalEnqueueHook.taskID(of: bodyTask)
        see(taskID)
        scope.seed(taskID)
    }

    package static func endDrive(_ scope: DriveScope) {
        scope.drives.subtract(1, ordering: .relaxed)
        activeDrives.subtract(1, ordering: .relaxed)
    }

    /// Makes the task running this code a member of `scope`: the body task of `drive`, as it starts.
    package static func joinCurrentTask(_ scope: DriveScope) {
        let taskID = GlobalEnqueueHook.currentTaskID
        guard taskID != 0 else { return }
        see(taskID)
        withRegistry { registry in
            if registry.scopes[scope.key] != nil { registry.add(taskID, to: scope) }
        }
    }

    /// The scope of `scheduler`; made when `creating` and it has none. The scheduler is alive (the
    /// caller holds it), and its deinit removes its scope before its address can be reused, so the
    /// entry under its identifier is its own.
    package static func scope(of scheduler: TestScheduler, creating: Bool) -> DriveScope? {
        guard creating || scheduler.hasDriveScope.load(ordering: .acquiring) else { return nil }
        let key = ObjectIdentifier(scheduler)
        return withRegistry { registry in
            if let entry = registry.scopes[key] { return entry.scope }
            guard creating else { return nil }
            let scope = DriveScope(scheduler: scheduler, highestSeen: highestSeen.load(ordering: .relaxed))
            registry.scopes[key] = (scope, [])
            scheduler.hasDriveScope.store(true, ordering: .releasing)
            return scope
        }
    }

    /// Called by `TestScheduler.deinit`: forgets the scheduler's scope and members at once, so the
    /// hook's fast path is back as soon as the last scope is gone.
    static func schedulerReleased(_ key: ObjectIdentifier) {
        let removed = withRegistry { $0.remove(key) }
        _ = removed  // released here, after unlocking
    }

    // MARK: the hook's side

    /// Called by the global enqueue hook for every job bound for the global pool: takes a member's
    /// job onto its scheduler and returns true, or returns false for the hook to pass it on.
    static func takeIn(_ job: UnownedJob) -> Bool {
        guard !isIdle else { return false }
        let taskID = GlobalEnqueueHook.taskID(of: job)
        guard taskID != 0 else { return false }
        lockedGlobalEnqueues.add(1, ordering: .relaxed)
        guard let (scope, scheduler) = claim(taskID) else { return false }
        scope.takenInJobs.add(1, ordering: .relaxed)
        // Unowned job, as in the scheduler's own `enqueue`: the entry runs only inside
        // `advance`/`step`/`run`, and the scheduler's deinit drops it without running it.
        scheduler.scheduleJob(of: taskID) {
            scope.jobStarts()
            job.runSynchronously(on: globalIdentity)
        }
        return true
        // `scheduler` is released here, outside the lock: if it was the last reference, the
        // scheduler's deinit runs now, and what its closures' releases enqueue passes the hook by.
    }

    /// Notes a job enqueued on `scheduler` itself (a task that prefers it, an actor pinned to it),
    /// so the tasks it starts join, and returns the scheduler's scope to mark the job's start.
    package static func noteJob(_ job: UnownedJob, on scheduler: TestScheduler) -> DriveScope? {
        guard !isIdle else { return nil }
        let taskID = GlobalEnqueueHook.taskID(of: job)
        if taskID != 0 { _ = claim(taskID) }
        return scope(of: scheduler, creating: false)
    }

    /// The scope `taskID` belongs to, and its scheduler: a member's, or the scope of the code that
    /// makes a new task ready (which then joins). Counts a member's wake-up from outside.
    private static func claim(_ taskID: UInt64) -> (DriveScope, TestScheduler)? {
        let currentID = GlobalEnqueueHook.currentTaskID
        let running = CurrentScheduler.explicit.map { ObjectIdentifier($0) }
        see(taskID)
        see(currentID)
        let claimed: (DriveScope, fromOutside: Bool)? = withRegistry { registry in
            if let scope = registry.members[taskID] {
                guard scope.isTakingIn.load(ordering: .relaxed) else { return nil }
                // Off the scheduler's thread, and not by the test's own task (older than the scope).
                let fromOutside = running != scope.key && (currentID == 0 || currentID > scope.baseline)
                return (scope, fromOutside)
            }
            // Not a member: a new task joins the scope of the code making it ready, if that code is
            // a member or the scheduler's work during a drive, and the task is younger than the job
            // running that code (an older task being resumed stays out).
            let creator: DriveScope
            let bound: UInt64
            if currentID != 0, let scope = registry.members[currentID] {
                creator = scope
                bound = running == scope.key ? scope.watermark.load(ordering: .relaxed) : currentID
            } else if let running, let scope = registry.scopes[running]?.scope,
                scope.drives.load(ordering: .relaxed) > 0
            {
                creator = scope
                bound = scope.watermark.load(ordering: .relaxed)
            } else {
                return nil
            }
            guard taskID > bound, creator.isTakingIn.load(ordering: .relaxed) else { return nil }
            registry.add(taskID, to: creator)
            creator.takenInTasks.add(1, ordering: .relaxed)
            return (creator, false)
        }
        // Nil scheduler: its deinit runs (and removes the scope); the job goes to the pool.
        guard let (scope, fromOutside) = claimed, let scheduler = scope.scheduler else { return nil }
        if fromOutside { scope.outsideWakeUps.add(1, ordering: .relaxed) }
        return (scope, scheduler)
    }

    /// Whether the task `taskID` was taken in by a scope whose scheduler is alive (for tests).
    package static func isTakenIn(_ taskID: UInt64) -> Bool {
        withRegistry { $0.members[taskID] != nil }
    }

    /// Marks the start of one of `scope`'s scheduler's jobs (see ``DriveScope/watermark``).
    package static func jobStarts(in scope: DriveScope?) {
        scope?.jobStarts()
    }

    #if DEBUG
    /// Whether this thread is inside the registry's lock (`TestScheduler.deinit` checks it).
    static var isInsideRegistry: Bool { InsideRegistryFlag.isSet }

    /// Runs `body` inside the registry's lock: for the test that shows a release there stops the
    /// program.
    package static func withRegistryLockedForTesting(_ body: () -> Void) {
        withRegistry { _ in body() }
    }

    /// A per-thread flag: a pthread key whose value is a non-nil bit pattern while set.
    private enum InsideRegistryFlag {
        private static let key: pthread_key_t = {
            var key = pthread_key_t()
            let rc = pthread_key_create(&key, nil)
            precondition(rc == 0, "pthread_key_create failed for the task capture's flag: \(rc)")
            return key
        }()

        static var isSet: Bool { pthread_getspecific(key) != nil }

        static func set(_ inside: Bool) {
            pthread_setspecific(key, inside ? UnsafeRawPointer(bitPattern: 1) : nil)
        }
    }
    #endif
}
