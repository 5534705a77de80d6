#if NIO
import NIOCore
import NIOPosix
import Scheduling
import SchedulingNIO

/// One SwiftNIO event loop on a thread of its own (`MultiThreadedEventLoopGroup(numberOfThreads: 1)`,
/// NIOPosix's `SelectableEventLoop`): the loop the SwiftNIO comparisons run on, each run on a
/// fresh one.
@_spi(Workloads)
public struct NIOLoopThread: Sendable {
    /// The group of one loop.
    public let group: MultiThreadedEventLoopGroup
    /// Its loop.
    public let loop: any EventLoop

    /// A group of one loop, started.
    public init() {
        group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        loop = group.next()
    }

    /// `loop.scheduleRepeatedTask(initialDelay:delay:_:)`: SwiftNIO's periodic timer, fixed
    /// delay, first `interval` from now.
    public func repeatedTask(everyNanoseconds interval: Int64, _ body: @escaping @Sendable () -> Void) -> RepeatedTask {
        loop.scheduleRepeatedTask(initialDelay: .nanoseconds(interval), delay: .nanoseconds(interval)) { _ in body() }
    }

    /// The loop's `EventLoopScheduler` (`loop.scheduler`).
    public var scheduler: any DateScheduler { loop.scheduler }

    /// Shuts the group down and waits for it; call once.
    public func shutdown() {
        do {
            try group.syncShutdownGracefully()
        } catch {
            preconditionFailure("NIOLoopThread: the event loop group did not shut down: \(error)")
        }
    }
}
#endif
