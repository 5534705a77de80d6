import Hummingbird
import NIOCore

/// Hummingbird's basic request context, and the event loop of the request's connection: a loop of
/// Hummingbird's event loop group (`MultiThreadedEventLoopGroup.singleton`, one loop per core),
/// where `--timeouts eventloop` and `--timeouts nio` arm the request's timeout. The route handlers
/// do not run on it: Hummingbird runs them in tasks on Swift's global executor.
struct ConnectionRequestContext: RequestContext {
    var coreContext: CoreRequestContextStorage
    /// The loop whose channel carries the request.
    let eventLoop: any EventLoop

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        eventLoop = source.channel.eventLoop
    }
}
