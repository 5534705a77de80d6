#if Tracing
import Instrumentation
import Scheduling

/// What a wrapper does at a `schedule` call: one task-local read, and nothing more when no context
/// is set (the action or handler is handed to the base scheduler unchanged).
enum ServiceContextCapture {
    /// `action`, or, when a context is set, a closure that runs `action` with it restored.
    @inline(__always)
    static func carrying(_ action: @escaping @Sendable () -> Void) -> @Sendable () -> Void {
        guard let context = ServiceContext.current else { return action }
        return { ServiceContext.withValue(context, operation: action) }
    }

    /// A recursive action that runs every time with the context of the `scheduleRecursive` call.
    @inline(__always)
    static func carrying(
        _ action: @escaping @Sendable (_ reschedule: @escaping @Sendable () -> Void) -> Void
    ) -> @Sendable (_ reschedule: @escaping @Sendable () -> Void) -> Void {
        guard let context = ServiceContext.current else { return action }
        return { reschedule in ServiceContext.withValue(context) { action(reschedule) } }
    }
}

/// A timer handler that restores the context of the call that scheduled it around both outcomes.
struct ServiceContextHandler<Base: SchedulerTimerHandler>: SchedulerTimerHandler {
    let base: Base
    let context: ServiceContext

    func timerFired() {
        ServiceContext.withValue(context) { base.timerFired() }
    }

    func timerCancelledByScheduler() {
        ServiceContext.withValue(context) { base.timerCancelledByScheduler() }
    }
}
#endif
