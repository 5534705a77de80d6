#if NIO
import Foundation
import LoopEngine
@_spi(SchedulerEngine) import Scheduling

extension EventLoopScheduler {
    /// The scheduler as code on its loop thread sees it, whose actions may capture what is not
    /// `Sendable` — a `ChannelHandlerContext`, a handler's own state — as SwiftNIO's
    /// `EventLoop.assumeIsolated()` allows for its own tasks. Stops the program when called off
    /// the loop's thread.
    ///
    /// ```swift
    /// final class IdleTimeoutHandler: ChannelInboundHandler {
    ///     typealias InboundIn = ByteBuffer
    ///     private var idle: (any RearmableTimer)?
    ///
    ///     func channelActive(context: ChannelHandlerContext) {
    ///         idle = context.eventLoop.scheduler.assumeIsolated()
    ///             .scheduleRearmable(after: .seconds(30)) { context.close(promise: nil) }
    ///         context.fireChannelActive()
    ///     }
    ///     func channelRead(context: ChannelHandlerContext, data: NIOAny) {
    ///         idle?.rearm(after: .seconds(30))
    ///         context.fireChannelRead(data)
    ///     }
    ///     func channelInactive(context: ChannelHandlerContext) {
    ///         idle?.dispose()
    ///         context.fireChannelInactive()
    ///     }
    /// }
    /// ```
    @available(*, noasync, message: "an async function may resume on another thread")
    public func assumeIsolated() -> Isolated {
        guard core.isOnLoopThread else {
            fatalError("EventLoopScheduler.assumeIsolated(): not on the event loop's thread")
        }
        return Isolated(scheduler: self)
    }

    /// ``EventLoopScheduler`` on its loop thread: the same calls, with actions that need not be
    /// `Sendable`, since they run on that thread only. Make it with
    /// ``EventLoopScheduler/assumeIsolated()`` and use it there; it is not `Sendable`.
    ///
    /// Disposing a timer from another thread is still allowed (the handles are `Sendable`): its
    /// action never runs, and is released on the disposing thread.
    public struct Isolated {
        /// The scheduler, for what needs no isolation.
        public let nonisolated: EventLoopScheduler

        init(scheduler: EventLoopScheduler) {
            nonisolated = scheduler
        }

        /// See ``EventLoopScheduler/schedule(_:)``.
        @available(*, noasync)
        @discardableResult
        public func schedule(_ action: @escaping () -> Void) -> any Disposable {
            nonisolated.core.scheduleTask(Self.transfer(action))
        }

        /// See ``EventLoopScheduler/schedule(after:_:)``.
        @available(*, noasync)
        @discardableResult
        public func schedule(after delay: Duration, _ action: @escaping () -> Void) -> any Disposable {
            nonisolated.core.scheduleTimer(after: delay, Self.transfer(action))
        }

        /// See ``EventLoopScheduler/schedule(at:_:)``.
        @available(*, noasync)
        @discardableResult
        public func schedule(at date: Date, _ action: @escaping () -> Void) -> any Disposable {
            BadInput.checkDate(date, method: "EventLoopScheduler.Isolated.schedule(at:)")
            return nonisolated.core.scheduleTimer(at: date, Self.transfer(action))
        }

        /// See `DateScheduler.scheduleRearmable(after:_:)`: a timer whose deadline `rearm` moves in
        /// place, the idle timeout pushed back on every read.
        @available(*, noasync)
        @discardableResult
        public func scheduleRearmable(after delay: Duration, _ action: @escaping () -> Void) -> any RearmableTimer {
            nonisolated.core.scheduleRearmable(.after(delay), Self.transfer(action))
        }

        /// See `DateScheduler.scheduleRearmable(at:_:)`.
        @available(*, noasync)
        @discardableResult
        public func scheduleRearmable(at date: Date, _ action: @escaping () -> Void) -> any RearmableTimer {
            BadInput.checkDate(date, method: "EventLoopScheduler.Isolated.scheduleRearmable(at:)")
            return nonisolated.core.scheduleRearmable(.at(date), Self.transfer(action))
        }

        /// An action made on the loop thread, which runs on it only (the scheduler runs every
        /// action on its loop thread): its captures never cross a thread while it runs. The two
        /// function types differ in the checker only, not in layout; cast inside a one-field
        /// struct, since a bit cast of the function value itself makes the compiler wrap it in two
        /// reabstraction thunks, each an allocation (the allocation guard's probe counted them).
        private static func transfer(_ action: @escaping () -> Void) -> @Sendable () -> Void {
            unsafeBitCast(Plain(run: action), to: Marked.self).run
        }

        private struct Plain {
            let run: () -> Void
        }

        private struct Marked {
            let run: @Sendable () -> Void
        }
    }
}

@available(*, unavailable)
extension EventLoopScheduler.Isolated: Sendable {}

extension EventLoopScheduler {
    /// Ends the scheduler and suspends until it is closed: for a test on SwiftNIO's testing loops
    /// (`EmbeddedEventLoop`, `NIOAsyncTestingEventLoop`), which tell the scheduler nothing when
    /// they shut down. On SwiftNIO's own event loops the loop's shutdown ends the scheduler by
    /// itself; calling this first is allowed.
    ///
    /// Tasks accepted before it began still run; every timer, due or not, is disposed and never
    /// runs (a task awaiting one of the scheduler's sleeps, clocks or timeouts throws
    /// `SchedulerShutdownError`); work scheduled afterwards is refused (an already-disposed
    /// disposable), and jobs of tasks and actors still pinned to it run on a fallback queue, one
    /// at a time. Once it returns, the scheduler calls nothing of SwiftNIO's any more: an
    /// `EmbeddedEventLoop` it ran on can be released. On the loop's own thread it completes at once
    /// (after the current batch, from inside one of the scheduler's actions).
    ///
    /// The loop keeps this scheduler (`eventLoop.scheduler` returns it, shut down) until the loop
    /// itself is released.
    public func shutdown() async {
        await LoopShutdown.shutdown(core)
    }

    /// ``shutdown()`` for synchronous code, blocking the calling thread until the scheduler is
    /// closed, unless that thread is the loop's own (an `EmbeddedEventLoop`'s test thread): there it
    /// completes at once. From another thread, the loop must be running for it to return.
    @available(*, noasync, message: "blocks the thread: use 'await shutdown()' in async code")
    public func syncShutdown() {
        LoopShutdown.shutdown(core)
    }
}
#endif
