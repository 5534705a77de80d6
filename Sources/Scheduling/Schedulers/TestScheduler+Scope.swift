import Synchronization

/// What ``TestScheduler/drive(_:)`` takes in: the tasks the body's code starts, transitively,
/// plain `Task {}` and `Task.detached {}` included, whose jobs then run on the test scheduler
/// instead of the global pool (Docs/Design.md §8.7).
///
/// **Membership.** A scheduler's scope is a registry of task ids (the runtime's 64-bit ids, from
/// one counter and never reused, so a finished task's address reused by another test's task is no
/// member). `drive`'s body task joins it as it starts. A task joins when it is made ready for the
/// first time by a member, or by the scheduler's own work while a `drive` of it runs (a timer's
/// action that starts a task), and was created after the code making it ready started running:
/// a new task, not an older one resumed (the test's own task, a task of another test waiting on
/// something shared). Task-locals are not used: the runtime's wake-up tasks do not copy them, and
/// many global enqueues (4 in 10 in a probe) have no current task at all (a timer's action run from
/// sync code, a Dispatch thread).
///
/// **Routing.** A member's job bound for the global pool goes through
/// ``GlobalEnqueueHook`` to its scheduler, as an action at the current virtual time, so
/// `advance`, `run` and `drive` run it, on their thread, in order with everything else. Jobs of
/// tasks that prefer the scheduler or of actors pinned to it arrive there anyway; the scope only
/// notes them (``TaskCapture/noteJob(_:on:)``), so the tasks they start join too.
///
/// **Identity.** A taken-in job runs as the global pool would run it (generic executor, the global
/// concurrent executor as task executor), not as the scheduler's task executor: the task prefers
/// no executor, so running it on the scheduler's would make each of its hops back to the pool —
/// every call into a nonisolated async function, every return from an actor — one more enqueue.
package final class DriveScope: Sendable {
    /// The scheduler the scope's tasks run on; nil once it is gone (its members' jobs then go to
    /// the global pool, and the registry forgets them).
    weak let scheduler: TestScheduler?
    let key: ObjectIdentifier
    /// `drive` calls of the scheduler in progress.
    let drives = Atomic<Int>(0)
    /// Whether the scope takes tasks in (package-level switch for the tests that show what fails
    /// without it).
    let isTakingIn = Atomic<Bool>(true)
    /// The highest task id seen when the scheduler's current job started: a task created by that
    /// job has a higher one, an older task resumed by it has not.
    let watermark: Atomic<UInt64>
    /// The highest task id seen when the scope began: the test's own task, which called `drive`,
    /// has no higher one.
    let baseline: UInt64
    /// Jobs of member tasks the hook took off the global pool onto the scheduler.
    let takenInJobs = Atomic<Int>(0)
    /// Tasks that joined the scope (the body tasks of `drive` not counted).
    let takenInTasks = Atomic<Int>(0)
    /// Member jobs made ready off the scheduler's thread by anything but the test's own task (which
    /// is older than the scope): a plain `Task.sleep`'s wake-up task, a thread outside any task (a
    /// Dispatch callback, I/O), a member coming back from another executor (the main actor).
    let outsideWakeUps = Atomic<Int>(0)

    fileprivate init(scheduler: TestScheduler, highestSeen: UInt64) {
        self.scheduler = scheduler
        key = ObjectIdentifier(scheduler)
        watermark = Atomic(highestSeen)
        baseline = highestSeen
    }

    /// Called as one of the scheduler's jobs starts.
    fileprivate func jobStarts() {
        watermark.store(TaskCapture.highestSeen.load(ordering: .relaxed), ordering: .relaxed)
    }
}

/// The process-wide registry of ``DriveScope``s and their member tasks, and the routing the global
/// enqueue hook asks for.
package enum TaskCapture {
    private struct Registry {
        var members: [UInt64: DriveScope] = [:]
        var scopes: [ObjectIdentifier: DriveScope] = [:]
        var lookupsSincePrune = 0

        /// Forgets the scopes whose scheduler is gone, and their members. (A live scope keeps its
        /// members, finished tasks included: the runtime tells no one when a task ends. Ids are
        /// never reused, so a stale member costs memory only, until its scheduler is released.)
        mutating func pruneDeadScopes() {
            lookupsSincePrune = 0
            scopes = scopes.filter { $0.value.scheduler != nil }
            members = members.filter { $0.value.scheduler != nil }
            TaskCapture.memberCount.store(members.count, ordering: .relaxed)
        }

        mutating func add(_ taskID: UInt64, to scope: DriveScope) {
            if members.updateValue(scope, forKey: taskID) == nil {
                TaskCapture.memberCount.add(1, ordering: .relaxed)
            }
        }

        /// The scope of the live scheduler `key`, if it has one.
        func scope(_ key: ObjectIdentifier?) -> DriveScope? {
            guard let key, let scope = scopes[key], scope.scheduler != nil else { return nil }
            return scope
        }
    }

    private static let registry = LockedValue(Registry())
    /// The registry's member count, read without the lock: with no `drive` in progress, 0 makes
    /// the hook pass every job on.
    private static let memberCount = Atomic<Int>(0)
    /// `drive` calls in progress, on any scheduler: a task started by a scheduler's work during one
    /// joins even before any task has.
    private static let activeDrives = Atomic<Int>(0)

    /// Whether no scope can claim a job: the hook's fast path.
    private static var isIdle: Bool {
        memberCount.load(ordering: .relaxed) == 0 && activeDrives.load(ordering: .relaxed) == 0
    }
    /// The highest task id any scope has seen (task ids only grow).
    fileprivate static let highestSeen = Atomic<UInt64>(0)
    /// Dead scopes are pruned on `drive` and every this many look-ups of the hook.
    private static let pruneInterval = 4096
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

    // MARK: drive's side

    /// The scope of `scheduler`, made on first use; installs the hook.
    package static func beginDrive(on scheduler: TestScheduler) -> DriveScope {
        let scope = scope(of: scheduler, creating: true)!
        scope.drives.add(1, ordering: .relaxed)
        activeDrives.add(1, ordering: .relaxed)
        return scope
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
        registry.withLock { $0.add(taskID, to: scope) }
    }

    /// The scope of `scheduler`; made (and the hook installed) when `creating` and it has none.
    package static func scope(of scheduler: TestScheduler, creating: Bool) -> DriveScope? {
        if creating {
            GlobalEnqueueHook.install()
            see(GlobalEnqueueHook.currentTaskID)
        }
        let key = ObjectIdentifier(scheduler)
        return registry.withLock { registry in
            if creating { registry.pruneDeadScopes() }
            if let scope = registry.scopes[key], scope.scheduler === scheduler { return scope }
            guard creating else { return nil }
            let scope = DriveScope(scheduler: scheduler, highestSeen: highestSeen.load(ordering: .relaxed))
            registry.scopes[key] = scope
            return scope
        }
    }

    // MARK: the hook's side

    /// Called by the global enqueue hook for every job bound for the global pool: takes a member's
    /// job onto its scheduler and returns true, or returns false for the hook to pass it on.
    static func takeIn(_ job: UnownedJob) -> Bool {
        guard !isIdle else { return false }
        let taskID = GlobalEnqueueHook.taskID(of: job)
        guard taskID != 0, let (scope, scheduler) = claim(taskID, countingLookup: true) else { return false }
        scope.takenInJobs.add(1, ordering: .relaxed)
        // Unowned job, as in the scheduler's own `enqueue`: the entry runs only inside
        // `advance`/`step`/`run`, and the scheduler's deinit drops it without running it.
        scheduler.schedule {
            scope.jobStarts()
            job.runSynchronously(on: globalIdentity)
        }
        return true
    }

    /// Notes a job enqueued on `scheduler` itself (a task that prefers it, an actor pinned to it),
    /// so the tasks it starts join, and returns the scheduler's scope to mark the job's start.
    package static func noteJob(_ job: UnownedJob, on scheduler: TestScheduler) -> DriveScope? {
        guard !isIdle else { return nil }
        let taskID = GlobalEnqueueHook.taskID(of: job)
        if taskID != 0 { _ = claim(taskID, countingLookup: false) }
        return scope(of: scheduler, creating: false)
    }

    /// The scope `taskID` belongs to, and its scheduler: a member's, or the scope of the code that
    /// makes a new task ready (which then joins). Counts a member's wake-up from outside.
    private static func claim(_ taskID: UInt64, countingLookup: Bool) -> (DriveScope, TestScheduler)? {
        let currentID = GlobalEnqueueHook.currentTaskID
        let running = CurrentScheduler.explicit.map { ObjectIdentifier($0) }
        see(taskID)
        see(currentID)
        let claimed: (DriveScope, TestScheduler, fromOutside: Bool)? = registry.withLock { registry in
            if countingLookup {
                registry.lookupsSincePrune += 1
                if registry.lookupsSincePrune >= pruneInterval { registry.pruneDeadScopes() }
            }
            if let scope = registry.members[taskID] {
                guard let scheduler = scope.scheduler else {
                    registry.pruneDeadScopes()
                    return nil
                }
                guard scope.isTakingIn.load(ordering: .relaxed) else { return nil }
                // Off the scheduler's thread, and not by the test's own task (older than the scope).
                let fromOutside = running != scope.key && (currentID == 0 || currentID > scope.baseline)
                return (scope, scheduler, fromOutside)
            }
            // Not a member: a new task joins the scope of the code making it ready, if that code is
            // a member or the scheduler's work during a drive, and the task is younger than the job
            // running that code (an older task being resumed stays out).
            let creator: DriveScope
            let bound: UInt64
            if currentID != 0, let scope = registry.members[currentID] {
                creator = scope
                bound = running == scope.key ? scope.watermark.load(ordering: .relaxed) : currentID
            } else if let scope = registry.scope(running), scope.drives.load(ordering: .relaxed) > 0 {
                creator = scope
                bound = scope.watermark.load(ordering: .relaxed)
            } else {
                return nil
            }
            guard taskID > bound, creator.isTakingIn.load(ordering: .relaxed), let scheduler = creator.scheduler
            else { return nil }
            registry.add(taskID, to: creator)
            creator.takenInTasks.add(1, ordering: .relaxed)
            return (creator, scheduler, false)
        }
        guard let (scope, scheduler, fromOutside) = claimed else { return nil }
        if fromOutside { scope.outsideWakeUps.add(1, ordering: .relaxed) }
        return (scope, scheduler)
    }

    /// Whether the task `taskID` was taken in by a scope whose scheduler is alive (for tests).
    package static func isTakenIn(_ taskID: UInt64) -> Bool {
        registry.withLock { $0.members[taskID]?.scheduler != nil }
    }

    /// Marks the start of one of `scope`'s scheduler's jobs (see ``DriveScope/watermark``).
    package static func jobStarts(in scope: DriveScope?) {
        scope?.jobStarts()
    }
}

extension TestScheduler {
    /// Jobs of tasks `drive` took in that the global-enqueue hook moved onto this scheduler.
    package var takenInJobCount: Int {
        TaskCapture.scope(of: self, creating: false)?.takenInJobs.load(ordering: .relaxed) ?? 0
    }

    /// Tasks `drive` took in (its own body tasks not counted).
    package var takenInTaskCount: Int {
        TaskCapture.scope(of: self, creating: false)?.takenInTasks.load(ordering: .relaxed) ?? 0
    }

    /// Jobs of taken-in tasks made ready from outside virtual time (a plain `Task.sleep`'s
    /// wake-up, a Dispatch callback, I/O, a task on the global pool).
    package var outsideWakeUpCount: Int {
        TaskCapture.scope(of: self, creating: false)?.outsideWakeUps.load(ordering: .relaxed) ?? 0
    }

    /// Whether `drive` takes in the tasks its body starts (default true); false runs `drive` as it
    /// was before it did, for the tests that show what fails without it.
    package var takesInTasks: Bool {
        get { TaskCapture.scope(of: self, creating: false)?.isTakingIn.load(ordering: .relaxed) ?? true }
        set { TaskCapture.scope(of: self, creating: true)!.isTakingIn.store(newValue, ordering: .relaxed) }
    }
}
