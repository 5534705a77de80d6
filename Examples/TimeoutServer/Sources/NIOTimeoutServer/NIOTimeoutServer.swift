import ArgumentParser
import Logging
import NIOCore
import NIOExtras
import NIOHTTP1
import NIOPosix
import ServerOptions
import UnixSignals

/// A plain SwiftNIO HTTP/1.1 server whose channel handler arms every timeout of its connection in
/// `channelRead`, on the connection's event loop: on the loop's `EventLoopScheduler`
/// (`--timeouts eventloop`) or with SwiftNIO's `scheduleTask` (`--timeouts nio`). See
/// ``HTTPTimeoutHandler``.
///
/// SIGTERM or SIGINT stops it gracefully: the listening socket closes, open connections close once
/// their current answer is written (SwiftNIO's quiescing), then the event loops shut down.
@main
struct NIOTimeoutServer: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "NIOTimeoutServer",
        abstract: "A SwiftNIO HTTP/1.1 server arming its timeouts on the event loop, on EventLoopScheduler or with scheduleTask."
    )

    @Option(help: "How the handlers arm their timers: eventloop (the loop's EventLoopScheduler) or nio (SwiftNIO's scheduleTask).")
    var timeouts: LoopTimersMode

    @OptionGroup var options: ServerOptions

    @Option(help: "How many event loops (threads) serve the connections.")
    var threads: Int = System.coreCount

    @Option(
        name: .customLong("idle-timeout-ms"),
        help: "How long a connection may stay without a read, in milliseconds (longer than both deadlines)."
    )
    var idleTimeoutMilliseconds: Int = 60_000

    func validate() throws {
        guard threads >= 1 else { throw ValidationError("--threads must be at least 1") }
        guard idleTimeoutMilliseconds > max(options.timeoutMilliseconds, options.slowTimeoutMilliseconds) else {
            throw ValidationError("--idle-timeout-ms must be longer than --timeout-ms and --slow-timeout-ms")
        }
    }

    func run() async throws {
        var logger = Logger(label: "NIOTimeoutServer")
        logger.logLevel = options.logLevel
        logger[metadataKey: "timeouts"] = "\(timeouts.rawValue)"
        let settings = ServerSettings(
            fastTimeout: options.fastTimeout,
            slowTimeout: options.slowTimeout,
            idleTimeout: .milliseconds(idleTimeoutMilliseconds),
            metrics: ServerMetrics(),
            logger: logger
        )
        // Trapped before the socket opens, so a signal during start-up stops the server gracefully.
        let signals = await UnixSignalsSequence(trapping: .sigterm, .sigint)
        let group = MultiThreadedEventLoopGroup(numberOfThreads: threads)
        do {
            try await serve(on: group, settings: settings, until: signals, logger: logger)
        } catch {
            try? await group.shutdownGracefully()
            throw error
        }
        // The loops' schedulers shut down with them: timers still pending are disposed.
        try await group.shutdownGracefully()
        logger.notice("stopped")
    }

    /// Listens until the first signal, then closes the listening socket and waits for the open
    /// connections to close.
    private func serve(
        on group: MultiThreadedEventLoopGroup,
        settings: ServerSettings,
        until signals: UnixSignalsSequence,
        logger: Logger
    ) async throws {
        let quiesce = ServerQuiescingHelper(group: group)
        let mode = timeouts
        let channel = try await ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 256)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .serverChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(quiesce.makeServerChannelHandler(channel: channel))
                }
            }
            .childChannelInitializer { channel in
                // On the channel's event loop: the handler and its timers are made there.
                channel.eventLoop.makeCompletedFuture {
                    let pipeline = channel.pipeline.syncOperations
                    try pipeline.configureHTTPServerPipeline(withErrorHandling: true)
                    switch mode {
                    case .eventloop:
                        let timers = EventLoopSchedulerTimers(on: channel.eventLoop)
                        try pipeline.addHandler(HTTPTimeoutHandler(timers: timers, settings: settings))
                    case .nio:
                        let timers = ScheduledTaskTimers(on: channel.eventLoop)
                        try pipeline.addHandler(HTTPTimeoutHandler(timers: timers, settings: settings))
                    }
                }
            }
            .bind(host: "127.0.0.1", port: options.port)
            .get()
        // The start-up script reads the port from this line.
        logger.notice("listening on 127.0.0.1:\(channel.localAddress?.port ?? -1)")

        for await signal in signals {
            logger.notice("\(signal): stopping")
            break
        }
        let closed = group.next().makePromise(of: Void.self)
        quiesce.initiateShutdown(promise: closed)
        try await closed.futureResult.get()
    }
}

extension LoopTimersMode: ExpressibleByArgument {}
