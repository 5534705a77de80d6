#if Tracing
import Instrumentation
import Scheduling

/// A ``Scheduling/Scheduler`` that carries `ServiceContext.current` from each `schedule` call into
/// the action: the action runs with the caller's context restored (`ServiceContext.withValue`), so
/// the spans and log lines it makes belong to the caller's trace. Everything else is the base's.
///
/// Make one with ``Scheduling/Scheduler/propagatingServiceContext()``; for a `DateScheduler` use
/// ``ServiceContextDateScheduler``, which carries the context into timers too.
///
/// The wrapper is a view, not a scheduler of its own: its actions run where and when the base runs
/// them, and while they run `Schedulers.current` is what the base makes it (the base itself, or
/// nothing new for `ImmediateScheduler`), never the wrapper. Code that schedules more work from
/// inside an action keeps the context only by scheduling on the wrapper again (or on another
/// propagating scheduler): the base alone does not carry it.
///
/// Cost: one task-local read per `schedule`. With no context set the action goes to the base
/// unchanged; with one, one closure that holds it.
public final class ServiceContextScheduler: Scheduler {
    /// The scheduler that runs the actions.
    public let base: any Scheduler

    /// A view of `base` that carries the caller's `ServiceContext` into each action.
    ///
    /// Wrapping a wrapper is harmless but reads the context twice per call;
    /// ``Scheduling/Scheduler/propagatingServiceContext()`` returns an existing wrapper as it is.
    public init(_ base: any Scheduler) {
        self.base = base
    }

    /// Schedules `action` on the base, to run with the context current at this call.
    ///
    /// - Returns: the base's disposable: disposing it before the action starts guarantees that it
    ///   never starts (the same race with an action starting on another thread as the base's).
    @discardableResult
    public func schedule(_ action: __owned @escaping @Sendable () -> Void) -> any Disposable {
        base.schedule(ServiceContextCapture.carrying(action))
    }

    /// The base's recursion (which trampolines on `ImmediateScheduler`), every run with the context
    /// current at this call.
    @discardableResult
    public func scheduleRecursive(
        _ action: @escaping @Sendable (_ reschedule: @escaping @Sendable () -> Void) -> Void
    ) -> any Disposable {
        base.scheduleRecursive(ServiceContextCapture.carrying(action))
    }
}

extension Scheduler {
    /// This scheduler, carrying `ServiceContext.current` from each `schedule` call into the action
    /// (see ``ServiceContextScheduler``). A wrapper already is one, and is returned as it is; a
    /// ``ServiceContextDateScheduler`` seen as a plain `Scheduler` gives a wrapper of its base, so
    /// the context is still read once per call.
    public func propagatingServiceContext() -> ServiceContextScheduler {
        if let wrapper = self as? ServiceContextScheduler { return wrapper }
        if let dateWrapper = self as? ServiceContextDateScheduler { return ServiceContextScheduler(dateWrapper.base) }
        return ServiceContextScheduler(self)
    }
}
#endif
