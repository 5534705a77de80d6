import NIOCore
import NIOHTTP1

/// The server's application handler, one per connection, which arms every timer of its connection
/// on the connection's event loop, in `channelRead`, as `Timers` says:
/// - at a request's head, its timeout (the fast or the slow deadline), cancelled when the answer
///   is written; if it passes first the answer is 504 Gateway Timeout;
/// - for `/slow?ms=N`, the N ms wait (a timer too), cancelled if the timeout passes first;
/// - the connection's idle timeout, pushed back on every read; if it passes the connection closes.
///
/// Requests come one at a time: `HTTPServerPipelineHandler`, before this one, holds back a
/// pipelined request until the previous answer's end is written.
final class HTTPTimeoutHandler<Timers: ChannelTimers>: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    /// The request being answered.
    private struct Exchange {
        /// Which request of the connection it is: a timer's action checks it, since SwiftNIO may
        /// still run a scheduled task cancelled while it sat in the batch of due tasks being run.
        let number: UInt64
        let head: HTTPRequestHead
        /// Its end was read.
        var ended = false
        /// The answer, once known; written when the request has ended.
        var answer: Answer?
        /// The request's timeout, and its deadline (for the log).
        var timeout: Timers.Timer?
        var deadline: Duration = .zero
        /// `/slow`'s wait.
        var wait: Timers.Timer?
    }

    private struct Answer {
        var status: HTTPResponseStatus
        var body = ByteBuffer()
        var contentType = "text/plain; charset=utf-8"
    }

    private let timers: Timers
    private let settings: ServerSettings
    private var exchange: Exchange?
    private var exchanges: UInt64 = 0
    private var idle: Timers.IdleTimer?

    /// A handler whose timers are `timers`, made on the connection's event loop.
    init(timers: Timers, settings: ServerSettings) {
        self.timers = timers
        self.settings = settings
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { armIdleTimeout(context: context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        armIdleTimeout(context: context)
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if idle != nil { timers.rearm(&idle!, after: settings.idleTimeout) }
        switch unwrapInboundIn(data) {
        case .head(let head):
            begin(head, context: context)
        case .body:
            break
        case .end:
            exchange?.ended = true
            answerIfReady(context: context)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        cancelTimers()
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        cancelTimers()
    }

    // MARK: The request

    private func begin(_ head: HTTPRequestHead, context: ChannelHandlerContext) {
        endExchange()  // none, unless a client sent a head before the previous request's end
        exchanges += 1
        let number = exchanges
        var exchange = Exchange(number: number, head: head)
        switch Route(head) {
        case .fast:
            settings.metrics.fastRequests.increment()
            exchange.deadline = settings.fastTimeout
            exchange.answer = Answer(status: .ok, body: greeting)
        case .slow(let milliseconds):
            settings.metrics.slowRequests.increment()
            exchange.deadline = settings.slowTimeout
            exchange.wait = timers.schedule(after: .milliseconds(milliseconds)) {
                self.waitEnded(number, milliseconds: milliseconds, context: context)
            }
        case .metrics:
            exchange.answer = Answer(
                status: .ok,
                body: ByteBuffer(bytes: settings.metrics.export()),
                contentType: "text/plain; version=0.0.4; charset=utf-8"
            )
        case .badRequest: exchange.answer = Answer(status: .badRequest)
        case .notFound: exchange.answer = Answer(status: .notFound)
        case .methodNotAllowed: exchange.answer = Answer(status: .methodNotAllowed)
        }
        if exchange.deadline > .zero {
            exchange.timeout = timers.schedule(after: exchange.deadline) {
                self.timeoutPassed(number, context: context)
            }
        }
        self.exchange = exchange
    }

    /// `/slow`'s wait ended before its timeout.
    private func waitEnded(_ number: UInt64, milliseconds: Int, context: ChannelHandlerContext) {
        guard let exchange, exchange.number == number, exchange.wait != nil else { return }
        self.exchange?.wait = nil  // it ran
        self.exchange?.answer = Answer(status: .ok, body: ByteBuffer(string: "slept \(milliseconds) ms\n"))
        answerIfReady(context: context)
    }

    /// The request's deadline passed before its answer was written: 504, at once (if the request
    /// has not ended, the connection closes after it: the rest of the request is never read).
    private func timeoutPassed(_ number: UInt64, context: ChannelHandlerContext) {
        guard let exchange, exchange.number == number, exchange.timeout != nil else { return }
        self.exchange?.timeout = nil  // it ran; the wait is cancelled as the answer is written
        self.exchange?.answer = Answer(status: .gatewayTimeout)
        settings.metrics.timeoutsFired.increment()
        settings.logger.warning("504: the \(exchange.deadline) deadline of \(exchange.head.uri) passed first")
        write(context: context, closing: !exchange.ended)
    }

    private func answerIfReady(context: ChannelHandlerContext) {
        guard let exchange, exchange.ended, exchange.answer != nil else { return }
        write(context: context, closing: false)
    }

    /// Writes the exchange's answer and ends the exchange, its timers cancelled.
    private func write(context: ChannelHandlerContext, closing: Bool) {
        guard let exchange, let answer = exchange.answer else { return }
        endExchange()

        let keepAlive = exchange.head.isKeepAlive && !closing
        var headers = HTTPHeaders()
        headers.add(name: "content-type", value: answer.contentType)
        headers.add(name: "content-length", value: String(answer.body.readableBytes))
        if !keepAlive {
            headers.add(name: "connection", value: "close")
        } else if exchange.head.version.major == 1, exchange.head.version.minor == 0 {
            headers.add(name: "connection", value: "keep-alive")
        }
        let head = HTTPResponseHead(version: exchange.head.version, status: answer.status, headers: headers)
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        if answer.body.readableBytes > 0 {
            context.write(wrapOutboundOut(.body(.byteBuffer(answer.body))), promise: nil)
        }
        let written = context.writeAndFlush(wrapOutboundOut(.end(nil)))
        if !keepAlive {
            written.assumeIsolated().whenComplete { _ in context.close(promise: nil) }
        }
    }

    // MARK: The connection

    private func armIdleTimeout(context: ChannelHandlerContext) {
        guard idle == nil else { return }
        idle = timers.scheduleIdle(after: settings.idleTimeout) {
            self.idle = nil
            self.settings.metrics.idleTimeoutsFired.increment()
            context.close(promise: nil)
        }
    }

    /// Cancels the exchange's timers, if any, and forgets it.
    private func endExchange() {
        if let timeout = exchange?.timeout { timers.cancel(timeout) }
        if let wait = exchange?.wait { timers.cancel(wait) }
        exchange = nil
    }

    private func cancelTimers() {
        if let idle { timers.cancel(idle) }
        idle = nil
        endExchange()
    }
}

/// The body of `/`.
private let greeting = ByteBuffer(string: "Hello from the loop!\n")
