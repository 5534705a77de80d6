import Foundation

/// Thrown by ``TestScheduler/drive(_:)`` when its body cannot finish at the current virtual time:
/// nothing on the scheduler is ready, and the body waits — on a timer or a sleep that needs
/// `advance`, or on work outside the scheduler.
public struct TestSchedulerStall: Error, Sendable, CustomStringConvertible {
    /// The scheduler's virtual time when the body stalled.
    public let now: Date
    /// Actions waiting on the scheduler then (timers, sleeps, periodic timers).
    public let pendingCount: Int
    /// When the first of them is due; nil when none is pending (the body waits on something
    /// outside the scheduler).
    public let nextDueDate: Date?
    /// Whether the body ended once `drive` cancelled it (it waited on this scheduler, and reacts to
    /// cancellation); false when it still waits, on something outside the scheduler.
    public let bodyEndedWhenCancelled: Bool

    /// Makes the error; ``TestScheduler/drive(_:)`` is what throws it.
    public init(now: Date, pendingCount: Int, nextDueDate: Date?, bodyEndedWhenCancelled: Bool) {
        self.now = now
        self.pendingCount = pendingCount
        self.nextDueDate = nextDueDate
        self.bodyEndedWhenCancelled = bodyEndedWhenCancelled
    }

    /// What is pending and what to do about it.
    public var description: String {
        let pending = "\(pendingCount) action\(pendingCount == 1 ? "" : "s") pending"
        let next =
            nextDueDate.map { due in
                let seconds = due.timeIntervalSince(now)
                return ", the next due in \(String(format: "%.6f", seconds)) s of virtual time "
                    + "(advance the scheduler to run it, between drive calls or from the body)"
            } ?? ""
        // Work outside virtual time: the body waits on nothing the scheduler holds, or still waits
        // once cancelled (on a task drive does not cancel, or on something outside).
        let causes =
            "work outside virtual time — a plain Task.sleep (real time, also in a task drive took in), "
            + "a Dispatch callback, I/O, the main actor?"
        let outside =
            !bodyEndedWhenCancelled
            ? "; the body still waits after cancellation: on \(causes)"
            : nextDueDate == nil ? "; the body waited on \(causes)" : ""
        return "TestSchedulerStall: the body waits, but nothing on the TestScheduler is ready at its current time "
            + "(\(now)): \(pending)\(next)\(outside)"
    }
}
