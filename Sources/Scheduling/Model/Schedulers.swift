import Dispatch

/// Entry points to the shared schedulers (RACScheduler's class methods).
public enum Schedulers {
    /// The scheduler whose action is running on this thread, if any.
    ///
    /// While a scheduler runs an action (a task, a timer, a periodic tick) it is that scheduler,
    /// and the previous value comes back afterwards, so nesting works. Outside any action it is
    /// `nil`, except on the main thread or on the main queue, where it is ``main`` (under an async
    /// `main` the main queue runs on a thread that is not the main thread: both are checked).
    /// ``ImmediateScheduler`` does not change it (<doc:BehaviourContract>, rule 2).
    public static var current: (any Scheduler)? {
        if let explicit = CurrentScheduler.explicit { return explicit }
        return CurrentScheduler.isOnMain ? main : nil
    }

    /// Runs actions inline, on the caller's thread.
    public static let immediate = ImmediateScheduler()

    /// A serial scheduler on the main queue.
    public static let main: QueueScheduler = {
        CurrentScheduler.installMainQueueKey()
        return QueueScheduler(name: "schedulers.main", targeting: .main)
    }()

    /// Runs actions at once when there is a current scheduler, otherwise on a background queue.
    public static let subscription = SubscriptionScheduler()

    /// Makes a new serial scheduler on a global queue of the given priority.
    public static func background(priority: SchedulerPriority = .default, name: String? = nil) -> QueueScheduler {
        QueueScheduler(name: name, priority: priority)
    }
}

/// The priority of a queue-backed scheduler, mapped to Dispatch qualities of service as
/// RACScheduler maps its priorities.
public enum SchedulerPriority: Sendable, CaseIterable {
    /// `userInitiated`.
    case high
    /// `default`.
    case `default`
    /// `utility`.
    case low
    /// `background`.
    case background

    /// The quality of service this priority runs at.
    public var qos: DispatchQoS.QoSClass {
        switch self {
        case .high: .userInitiated
        case .default: .default
        case .low: .utility
        case .background: .background
        }
    }
}
