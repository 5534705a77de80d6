import Foundation

/// Thrown by ``TestScheduler/drive(_:)`` when the work on the scheduler never lets virtual time
/// move: it ran 1,000,000 actions in a row at one instant. Typically a task that loops on
/// `Task.yield()`, polling for something that only a later virtual time brings (nothing advances
/// the clock while it spins), or an action that schedules itself again at once.
///
/// ``TestScheduler/advance(by:)`` and ``TestScheduler/advance(to:)`` stop the program with the
/// same message instead: they do not throw.
public struct TestSchedulerSpin: Error, Sendable, CustomStringConvertible {
    /// The virtual time the clock stayed at.
    public let now: Date
    /// The actions run in a row at that time.
    public let actionCount: Int
    /// The id the Swift runtime gives the task whose job ran last — the task that keeps making
    /// itself ready (the debugger shows task ids); nil when the last action was not a task's job
    /// (an action that schedules itself again).
    public let taskID: UInt64?

    /// Makes the error; ``TestScheduler/drive(_:)`` is what throws it.
    public init(now: Date, actionCount: Int, taskID: UInt64?) {
        self.now = now
        self.actionCount = actionCount
        self.taskID = taskID
    }

    init(_ report: TestSchedulerSpinReport) {
        self.init(
            now: Nanoseconds.date(sinceEpoch: report.now),
            actionCount: report.actionCount,
            taskID: report.taskID == 0 ? nil : report.taskID
        )
    }

    /// What ran, and what to do about it.
    public var description: String { "TestSchedulerSpin: \(summary)" }

    /// The message without the type's name (also `advance`'s stop message).
    var summary: String {
        let what =
            taskID.map {
                "task \($0) keeps making itself ready at once (a loop on Task.yield() polling for something "
                    + "only a later virtual time brings? advance the clock instead of polling)"
            } ?? "an action keeps scheduling work at the current time (an action that schedules itself again at once?)"
        return "ran \(actionCount) actions in a row at virtual time \(now) without the clock moving: \(what)"
    }
}
