import ArgumentParser
import CoreMetrics
import Hummingbird
import Logging
import LoopScheduling
import LoopSchedulingMetrics
import NIOCore
import Prometheus
import SchedulingServiceLifecycle
import ServerOptions
import ServiceLifecycle
import UnixSignals

/// A Hummingbird 2 server whose per-request timeouts are armed on a `LoopSchedulerGroup`
/// (`--timeouts loop`), on the `EventLoopScheduler` of the connection's SwiftNIO event loop
/// (`--timeouts eventloop`), with SwiftNIO's `scheduleTask` on that loop (`--timeouts nio`), or by
/// racing `Task.sleep` in a task group (`--timeouts taskgroup`). Hummingbird runs the route
/// handlers on Swift's global executor, not on the event loops, so every mode arms its timer from
/// a thread of the global executor (see ``TimeoutMode``).
///
/// One `ServiceGroup` runs the loops and the HTTP server; SIGTERM or SIGINT shuts it down
/// gracefully: the server drains first, then the loops (listed first, so stopped last).
@main
struct TimeoutServer: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "TimeoutServer",
        abstract: "A Hummingbird server arming a timeout per request: on loops, on event loops, or with task groups."
    )

    @Option(
        help: """
            How each request arms its timeout: loop (withTimeout on the loops), eventloop (withTimeout on the \
            connection's EventLoopScheduler), nio (SwiftNIO's scheduleTask) or taskgroup (Task.sleep race).
            """
    )
    var timeouts: TimeoutMode

    @OptionGroup var options: ServerOptions

    @Option(help: "How many loops the LoopSchedulerGroup runs.")
    var loops: Int = 1

    func validate() throws {
        guard loops >= 1 else { throw ValidationError("--loops must be at least 1") }
    }

    #if LOOP_EXECUTOR_FACTORY
    // Built with TIMEOUTSERVER_EXECUTORS=loops (see Package.swift): every task and Task.sleep of the
    // program, Hummingbird's included, runs on loops (trait ExperimentalExecutors).
    typealias DefaultExecutorFactory = LoopExecutorFactory
    #endif

    func run() async throws {
        // Every line written in a request's ServiceContext carries its trace id.
        var logger = Logger(label: "TimeoutServer", metadataProvider: .traceID)
        logger.logLevel = options.logLevel
        logger[metadataKey: "timeouts"] = "\(timeouts.rawValue)"
        #if LOOP_EXECUTOR_FACTORY
        guard LoopExecutorFactory.isInEffect else {
            throw ValidationError("LoopExecutorFactory is not in effect: build with -Xfrontend -disable-availability-checking")
        }
        logger.notice("executors: LoopExecutorFactory, \(LoopExecutorFactory.defaultLoops.count) default loops")
        #endif

        // Metrics first: LoopMetrics() and the routes' counters read MetricsSystem.factory.
        let registry = PrometheusCollectorRegistry()
        MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: registry))
        let fired = Counter(label: "timeouts_fired_total")

        let loopGroup = try LoopSchedulerGroup(count: loops, name: "timeouts", metricsDelegate: LoopMetrics())
        let router = makeRouter(
            timeouts: RequestTimeouts(mode: timeouts, loops: loopGroup, fired: fired, logger: logger),
            deadlines: RouteTimeouts(fast: options.fastTimeout, slow: options.slowTimeout),
            exportMetrics: { registry.emitToBuffer() }
        )
        let app = Application(
            router: router,
            configuration: ApplicationConfiguration(address: .hostname("127.0.0.1", port: options.port)),
            onServerRunning: { [logger] channel in
                // The start-up script reads the port from this line.
                logger.notice("listening on 127.0.0.1:\(channel.localAddress?.port ?? -1)")
            },
            logger: logger
        )
        let services = ServiceGroup(
            configuration: ServiceGroupConfiguration(
                services: [
                    // Listed first: a group stops its services in reverse order, so the loops
                    // still serve the timeouts of requests the server drains.
                    .init(service: loopGroup),
                    .init(service: app, successTerminationBehavior: .gracefullyShutdownGroup),
                ],
                gracefulShutdownSignals: [.sigterm, .sigint],
                logger: logger
            )
        )
        try await services.run()
        logger.notice("stopped")
    }
}

extension TimeoutMode: ExpressibleByArgument {}
