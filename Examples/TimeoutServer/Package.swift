// swift-tools-version:6.1
// The "real servers" of Docs/Design.md §9, in one package so SwiftNIO is compiled once for both:
// - TimeoutServer: a Hummingbird 2 service whose per-request timeouts are armed on a LoopSchedulerGroup
//   (`withTimeout`), on an EventLoopScheduler of a SwiftNIO event loop, with SwiftNIO's `scheduleTask`,
//   or by racing `Task.sleep` in a task group;
// - NIOTimeoutServer: a plain NIOHTTP1 server whose channel handler arms its timeouts on its event loop,
//   on the loop's EventLoopScheduler or with SwiftNIO's `scheduleTask`.
// Its own package, so the core package's build never compiles Hummingbird and SwiftNIO.
import PackageDescription

// TIMEOUTSERVER_EXECUTORS=loops builds the server on LoopExecutorFactory (trait ExperimentalExecutors
// of swift-schedulers): every task and Task.sleep of the program on loops. Swift 6.3 reads the
// server's `DefaultExecutorFactory` only with -disable-availability-checking.
let onLoops = Context.environment["TIMEOUTSERVER_EXECUTORS"] == "loops"

let strictSettings: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .enableUpcomingFeature("ExistentialAny"),
]

let package = Package(
    name: "TimeoutServer",
    dependencies: [
        // The integrations the server uses are package traits of swift-schedulers.
        .package(
            name: "swift-schedulers",
            path: "../..",
            traits: onLoops
                ? ["ServiceLifecycle", "Metrics", "Tracing", "NIO", "ExperimentalExecutors"]
                : ["ServiceLifecycle", "Metrics", "Tracing", "NIO"]
        ),
        // No default traits: the example needs neither swift-configuration nor full Foundation.
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1", traits: []),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        // Already in the graph through Hummingbird: NIOTimeoutServer's graceful shutdown (quiescing).
        .package(url: "https://github.com/apple/swift-nio-extras", from: "1.34.1"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-distributed-tracing", from: "1.7.3"),
    ],
    targets: [
        .executableTarget(
            name: "TimeoutServer",
            dependencies: [
                .product(name: "Scheduling", package: "swift-schedulers"),
                .product(name: "LoopScheduling", package: "swift-schedulers"),
                .product(name: "SchedulingServiceLifecycle", package: "swift-schedulers"),
                .product(name: "LoopSchedulingMetrics", package: "swift-schedulers"),
                .product(name: "SchedulingTracing", package: "swift-schedulers"),
                .product(name: "SchedulingWorkloads", package: "swift-schedulers"),
                .product(name: "SchedulingNIO", package: "swift-schedulers"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Instrumentation", package: "swift-distributed-tracing"),
                "ServerOptions",
            ],
            swiftSettings: strictSettings
                + (onLoops ? [.define("LOOP_EXECUTOR_FACTORY"), .unsafeFlags(["-Xfrontend", "-disable-availability-checking"])] : [])
        ),
        .executableTarget(
            name: "NIOTimeoutServer",
            dependencies: [
                .product(name: "SchedulingNIO", package: "swift-schedulers"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOExtras", package: "swift-nio-extras"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                "ServerOptions",
            ],
            swiftSettings: strictSettings
        ),
        // The command-line options the two servers share.
        .target(
            name: "ServerOptions",
            dependencies: [
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSettings
        ),
    ]
)
