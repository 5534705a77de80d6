import LoopScheduling
import ServiceLifecycle

extension LoopScheduler: Service {
    /// Runs the loop as a service of a `ServiceGroup`: waits for graceful shutdown or for the
    /// calling task's cancellation, then shuts the loop down and returns.
    ///
    /// The loop runs from its creation (on its own thread); `run()` ties its end to the service
    /// group's lifecycle. When it returns, ``LoopScheduler/shutdown()-swift.method`` has
    /// completed: every task accepted before shutdown began ran, every timer was disposed without
    /// running, the loop is closed and its thread joined. Scheduling afterwards returns an
    /// already-disposed disposable. Work other services schedule on the loop during the graceful
    /// shutdown still runs until this service's turn comes (a `ServiceGroup` shuts services down
    /// in reverse order: list the loop before the services that use it).
    ///
    /// Returns normally on cancellation too (the service group then treats it as finished).
    ///
    /// - Throws: ``ServiceAlreadyRunError``, at once and without touching the loop, if `run()` was
    ///   called on this scheduler before, or is running concurrently.
    /// - Note: A loop shut down by ``LoopScheduler/shutdown()-swift.method`` while `run()` waits does
    ///   not end the service: `run()` still waits for graceful shutdown or cancellation.
    public func run() async throws {
        try ServiceRuns.shared.claim(self, service: "LoopScheduler \"\(name)\"")
        await ServiceWait.untilGracefulShutdownOrCancellation()
        await shutdown()
    }
}

extension LoopSchedulerGroup: Service {
    /// Runs the group's loops as one service: waits for graceful shutdown or for the calling task's
    /// cancellation, then shuts every loop down (see ``LoopScheduling/LoopScheduler/run()``) and
    /// returns once all of them are closed and their threads joined.
    ///
    /// - Throws: ``ServiceAlreadyRunError``, at once and without touching the loops, if `run()` was
    ///   called on this group before, or is running concurrently. The group's schedulers are not
    ///   claimed one by one: running one of them as a service of its own as well is allowed, and
    ///   whichever returns first shuts it down.
    public func run() async throws {
        let names = schedulers.map(\.name).joined(separator: ", ")
        try ServiceRuns.shared.claim(self, service: "LoopSchedulerGroup [\(names)]")
        await ServiceWait.untilGracefulShutdownOrCancellation()
        await shutdown()
    }
}

/// The wait at the heart of a loop service.
enum ServiceWait {
    /// Returns on graceful shutdown (outside a `ServiceGroup` there is none to wait for) or when the
    /// calling task is cancelled, whichever comes first; at once if either happened already.
    static func untilGracefulShutdownOrCancellation() async {
        // `gracefulShutdown()` throws `CancellationError` on cancellation, which is the other way
        // out of the wait, not a failure of the service.
        try? await gracefulShutdown()
    }
}
