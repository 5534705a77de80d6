#if ServiceLifecycle
import LoopScheduling
import ServiceLifecycle

extension LoopScheduler: Service {
    /// Runs the loop as a service of a `ServiceGroup`: waits for graceful shutdown, for the calling
    /// task's cancellation or for the loop to close, then shuts the loop down and returns.
    ///
    /// The loop runs from its creation (on its own thread); `run()` ties its end to the service
    /// group's lifecycle. When it returns, `LoopScheduler.shutdown()` has
    /// completed: every task accepted before shutdown began ran, every timer was disposed without
    /// running, the loop is closed and its thread joined. Scheduling afterwards returns an
    /// already-disposed disposable. Work other services schedule on the loop during the graceful
    /// shutdown still runs until this service's turn comes (a `ServiceGroup` shuts services down
    /// in reverse order: list the loop before the services that use it).
    ///
    /// A loop shut down by someone else's `LoopScheduler.shutdown()` while `run()`
    /// waits ends the service too: `run()` returns once that shutdown completed (a `ServiceGroup`
    /// then applies the service's `successTerminationBehavior`, by default ending the group with
    /// `ServiceGroupError.serviceFinishedUnexpectedly`). It returns normally on cancellation too.
    /// Nothing `run()` starts outlives it.
    ///
    /// - Throws: ``ServiceAlreadyRunError``, at once and without touching the loop, if `run()` was
    ///   called on this scheduler before, or is running concurrently.
    public func run() async throws {
        guard claimOnce() else { throw ServiceAlreadyRunError(service: "LoopScheduler \"\(name)\"") }
        await ServiceWait.untilStopped(closed: { await self.waitUntilClosed() }, shutdown: { await self.shutdown() })
    }
}

extension LoopSchedulerGroup: Service {
    /// Runs the group's loops as one service: waits for graceful shutdown, for the calling task's
    /// cancellation or for every loop of the group to close, then shuts every loop down (see
    /// ``LoopScheduling/LoopScheduler/run()``) and returns once all of them are closed and their
    /// threads joined.
    ///
    /// Loops shut down one by one by someone else do not end the service while one of the group's
    /// loops still runs; once the last one closed, `run()` returns.
    ///
    /// - Throws: ``ServiceAlreadyRunError``, at once and without touching the loops, if `run()` was
    ///   called on this group before, or is running concurrently. The group's schedulers are not
    ///   claimed one by one: running one of them as a service of its own as well is allowed, and
    ///   whichever returns first shuts it down.
    public func run() async throws {
        guard claimOnce() else {
            let names = schedulers.map(\.name).joined(separator: ", ")
            throw ServiceAlreadyRunError(service: "LoopSchedulerGroup [\(names)]")
        }
        await ServiceWait.untilStopped(closed: { await self.waitUntilClosed() }, shutdown: { await self.shutdown() })
    }
}

/// The wait at the heart of a loop service.
enum ServiceWait {
    /// Waits for the first of: graceful shutdown (outside a `ServiceGroup` there is none), the
    /// calling task's cancellation, or `closed` returning (the loops were shut down by someone
    /// else). Then runs `shutdown` and returns once both waits have ended: nothing outlives it.
    ///
    /// `closed` cannot be cancelled (it waits for the loop, not for the task); `shutdown` closing
    /// the loops is what ends it when the other wait won. `shutdown` is harmless on loops closed
    /// already: it returns once they are.
    static func untilStopped(
        closed: @escaping @Sendable () async -> Void,
        shutdown: @Sendable () async -> Void
    ) async {
        await withTaskGroup(of: Void.self) { waits in
            // The child inherits the task-local graceful-shutdown context of the service group.
            // `gracefulShutdown()` throws `CancellationError` on cancellation, which is the other
            // way out of the wait, not a failure of the service.
            waits.addTask { try? await gracefulShutdown() }
            waits.addTask { await closed() }
            await waits.next()
            // Ends the graceful-shutdown wait if the loops closed first.
            waits.cancelAll()
            // Ends the `closed` wait if it did not win; completes a shutdown begun elsewhere.
            await shutdown()
        }
    }
}
#endif
