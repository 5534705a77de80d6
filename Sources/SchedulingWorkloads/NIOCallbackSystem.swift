#if NIO
import NIOCore

/// SwiftNIO's scheduled callbacks on one of its event loops (``NIOLoopThread``):
/// `scheduleCallback(in:handler:)` with a handler object per timer, as a user writes one, and
/// `NIOScheduledCallback.cancel()` (on NIOPosix a linear search of the loop's heap, as
/// `Scheduled.cancel()`). SwiftNIO has no periodic callback: ``scheduleRepeating(everyNanoseconds:_:)``
/// is its `scheduleRepeatedTask`.
@_spi(Workloads)
public struct NIOCallbackSystem: WorkloadSystem {
    /// The loop and its thread.
    public let thread: NIOLoopThread
    /// Cancellations the handlers heard (`didCancelScheduledCallback`): one per cancelled callback.
    public let cancellations = Tally()

    /// The loop the callbacks are scheduled on.
    public var loop: any EventLoop { thread.loop }

    /// A system on a fresh loop of its own.
    public init() {
        thread = NIOLoopThread()
    }

    /// A callback, or SwiftNIO's repeated task.
    public enum TimerHandle: Sendable {
        case callback(NIOScheduledCallback)
        case repeated(RepeatedTask)
    }

    /// `loop.execute(_:)`.
    public func execute(_ body: @escaping @Sendable () -> Void) { loop.execute(body) }

    /// `loop.scheduleCallback(in:handler:)` with a new ``CallbackTimer`` holding `body`.
    public func schedule(afterNanoseconds delay: Int64, _ body: @escaping @Sendable () -> Void) -> TimerHandle {
        .callback(scheduleCallback(afterNanoseconds: delay, handler: CallbackTimer(body, cancellations: cancellations)))
    }

    /// `loop.scheduleCallback(in:handler:)`. The loop refuses only once it is shutting down, which
    /// no workload does while it schedules.
    public func scheduleCallback(
        afterNanoseconds delay: Int64,
        handler: some NIOScheduledCallbackHandler & Sendable
    ) -> NIOScheduledCallback {
        do {
            return try loop.scheduleCallback(in: .nanoseconds(delay), handler: handler)
        } catch {
            preconditionFailure("NIOCallbackSystem: the loop refused a callback: \(error)")
        }
    }

    /// `loop.scheduleRepeatedTask(initialDelay:delay:_:)` (fixed delay).
    public func scheduleRepeating(
        everyNanoseconds interval: Int64,
        _ body: @escaping @Sendable () -> Void
    ) -> TimerHandle {
        .repeated(thread.repeatedTask(everyNanoseconds: interval, body))
    }

    /// `NIOScheduledCallback.cancel()` or `RepeatedTask.cancel()`.
    public func cancel(_ timer: TimerHandle) {
        switch timer {
        case .callback(let callback): callback.cancel()
        case .repeated(let task): task.cancel()
        }
    }

    /// Shuts the loop's group down.
    public func shutdown() { thread.shutdown() }
}

/// A scheduled callback's handler holding the timer's action: one object per timer, as a user's
/// handler of one timeout. Counts its cancellation.
@_spi(Workloads)
public final class CallbackTimer: NIOScheduledCallbackHandler, Sendable {
    @usableFromInline let body: @Sendable () -> Void
    @usableFromInline let cancellations: Tally

    /// A handler that runs `body` when its callback comes and counts into `cancellations` when it
    /// is cancelled.
    public init(_ body: @escaping @Sendable () -> Void, cancellations: Tally) {
        self.body = body
        self.cancellations = cancellations
    }

    /// Runs the action.
    public func handleScheduledCallback(eventLoop: some EventLoop) { body() }

    /// Counts the cancellation.
    public func didCancelScheduledCallback(eventLoop: some EventLoop) { cancellations.add() }
}
#endif
