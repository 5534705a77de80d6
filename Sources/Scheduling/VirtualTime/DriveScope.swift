import Synchronization

/// One scheduler's part of ``TaskCapture``: its counters and the bounds that tell a new task from
/// an older one (Docs/Design.md §8.7). Made by the scheduler's first `drive`; the registry forgets
/// it, and its members, when the scheduler is released.
package final class DriveScope: Sendable {
    /// The scheduler the scope's tasks run on; nil once it is gone (its members' jobs then go to
    /// the global pool). Loaded only outside the registry's lock: the strong reference a load
    /// makes may be the scheduler's last one, whose release runs user code.
    weak let scheduler: TestScheduler?
    let key: ObjectIdentifier
    /// `drive` calls of the scheduler in progress.
    let drives = Atomic<Int>(0)
    /// Whether the scope takes tasks in (package-level switch for the tests that show what fails
    /// without it).
    let isTakingIn = Atomic<Bool>(true)
    /// Ids above it belong to tasks created after the scheduler's current job started, or after
    /// the current `drive` began (whichever is later): the highest id seen at the job's start, and
    /// at least the id of the drive's body task, made as the drive began (task ids grow with
    /// creation, so that id exceeds every task that existed then). A task created by the job has a
    /// higher id; an older task resumed by it has not.
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

    init(scheduler: TestScheduler, highestSeen: UInt64) {
        self.scheduler = scheduler
        key = ObjectIdentifier(scheduler)
        watermark = Atomic(highestSeen)
        baseline = highestSeen
    }

    /// Called as one of the scheduler's jobs starts (on the driving thread, the only writer).
    func jobStarts() {
        watermark.store(TaskCapture.highestSeen.load(ordering: .relaxed), ordering: .relaxed)
    }

    /// Raises the bound to `taskID`, the id of a task made as a `drive` begins.
    func seed(_ taskID: UInt64) {
        if taskID > watermark.load(ordering: .relaxed) { watermark.store(taskID, ordering: .relaxed) }
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
