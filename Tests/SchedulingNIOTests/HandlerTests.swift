#if NIO
import NIOCore
import NIOEmbedded
import NIOHTTP1
import Scheduling
import SchedulingNIO
import Testing

// The two handlers of the article "SwiftNIO event loops", as a user writes them.

/// Closes a connection that has read nothing for `timeout`: one timer per connection, pushed back
/// in place on every read (O(1), no allocation, no lock on the loop thread).
final class IdleTimeoutHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny
    private let timeout: Duration
    private var idle: (any RearmableTimer)?

    init(timeout: Duration) { self.timeout = timeout }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { arm(context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        arm(context)
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        idle?.rearm(after: timeout)
        context.fireChannelRead(data)
    }

    func channelInactive(context: ChannelHandlerContext) {
        idle?.dispose()
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        idle?.dispose()
    }

    private func arm(_ context: ChannelHandlerContext) {
        guard idle == nil else { return }
        idle = context.eventLoop.scheduler.assumeIsolated().scheduleRearmable(after: timeout) {
            context.close(promise: nil)
        }
    }
}

/// Answers 504 Gateway Timeout when a request's response is not under way `timeout` after its
/// head arrived: armed at the request head, disposed when the response begins.
final class RequestTimeoutHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart
    private let timeout: Duration
    private var pending: (any Disposable)?

    init(timeout: Duration) { self.timeout = timeout }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .head(let head) = unwrapInboundIn(data) {
            pending?.dispose()
            pending = context.eventLoop.scheduler.assumeIsolated().schedule(after: timeout) {
                self.pending = nil
                self.answerTimedOut(context, version: head.version)
            }
        }
        context.fireChannelRead(data)
    }

    private func answerTimedOut(_ context: ChannelHandlerContext, version: HTTPVersion) {
        let head = HTTPResponseHead(version: version, status: .gatewayTimeout, headers: ["connection": "close"])
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil))).assumeIsolated().whenComplete { _ in
            context.close(promise: nil)
        }
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .head = unwrapOutboundIn(data) {
            pending?.dispose()
            pending = nil
        }
        context.write(data, promise: promise)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        pending?.dispose()
    }
}

@Suite("Handlers on EventLoopScheduler, on EmbeddedChannel")
struct HandlerTests {
    @Test("The idle timeout closes a connection that read nothing for 30 s, and every read pushes it back")
    func idleTimeout() throws {
        let channel = EmbeddedChannel(handler: IdleTimeoutHandler(timeout: .seconds(30)))
        // An embedded channel connects at once, inside the call: nothing to wait for.
        channel.connect(to: try SocketAddress(ipAddress: "127.0.0.1", port: 1), promise: nil)
        #expect(channel.isActive, "the embedded channel did not connect")
        let loop = channel.embeddedEventLoop
        for _ in 0..<5 {
            loop.advanceTime(by: .seconds(20))
            try channel.writeInbound(ByteBuffer(string: "ping"))
            _ = try channel.readInbound(as: ByteBuffer.self)
        }
        #expect(channel.isActive, "closed although a read came every 20 s")
        loop.advanceTime(by: .seconds(30) - .nanoseconds(1))
        #expect(channel.isActive, "closed before 30 s without a read")
        loop.advanceTime(by: .nanoseconds(1))
        #expect(!channel.isActive, "still open 30 s after the last read")
        loop.scheduler.syncShutdown()
    }

    @Test("The request timeout answers 504 when the response is late, and nothing when it is on time")
    func requestTimeout() throws {
        let channel = EmbeddedChannel(handler: RequestTimeoutHandler(timeout: .milliseconds(50)))
        let loop = channel.embeddedEventLoop
        let head = HTTPRequestHead(version: .http1_1, method: .GET, uri: "/slow")

        // On time: the response begins at 49 ms, the timeout is disposed.
        try channel.writeInbound(HTTPServerRequestPart.head(head))
        try channel.writeInbound(HTTPServerRequestPart.end(nil))
        loop.advanceTime(by: .milliseconds(49))
        try channel.writeOutbound(HTTPServerResponsePart.head(HTTPResponseHead(version: .http1_1, status: .ok)))
        try channel.writeOutbound(HTTPServerResponsePart.end(nil))
        loop.advanceTime(by: .seconds(1))
        guard case .head(let ok) = try channel.readOutbound(as: HTTPServerResponsePart.self) else {
            Issue.record("no response head")
            return
        }
        #expect(ok.status == .ok)
        _ = try channel.readOutbound(as: HTTPServerResponsePart.self)
        #expect(try channel.readOutbound(as: HTTPServerResponsePart.self) == nil, "a 504 followed an answered request")

        // Late: 504 at 50 ms, not before.
        try channel.writeInbound(HTTPServerRequestPart.head(head))
        loop.advanceTime(by: .milliseconds(50) - .nanoseconds(1))
        #expect(try channel.readOutbound(as: HTTPServerResponsePart.self) == nil, "504 before 50 ms")
        loop.advanceTime(by: .nanoseconds(1))
        guard case .head(let timedOut) = try channel.readOutbound(as: HTTPServerResponsePart.self) else {
            Issue.record("no 504 at 50 ms")
            return
        }
        #expect(timedOut.status == .gatewayTimeout)
        loop.scheduler.syncShutdown()
    }
}
#endif
