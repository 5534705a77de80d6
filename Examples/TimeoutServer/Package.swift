// swift-tools-version:6.1
// The "real server" of Docs/Design.md §9: a Hummingbird 2 service whose per-request timeouts are armed on a
// LoopSchedulerGroup (`withTimeout`) or, for comparison, by racing `Task.sleep` in a task group.
// Its own package, so the core package's build never compiles Hummingbird and SwiftNIO.
import PackageDescription

// TIMEOUTSERVER_EXECUTORS=loops builds the server on LoopExecutorFactory (trait ExperimentalExecutors
// of swift-schedulers): every task and Task.sleep of the program on loops. Swift 6.3 reads the
// server's `DefaultExecutorFactory` only with -disable-availability-checking.
let onLoops = Context.environment["TIMEOUTSERVER_EXECUTORS"] == "loops"

let package = Package(
    name: "TimeoutServer",
    dependencies: [
        // The integrations the server uses are package traits of swift-schedulers.
        .package(
            name: "swift-schedulers",
            path: "../..",
            traits: onLoops
                ? ["ServiceLifecycle", "Metrics", "Tracing", "ExperimentalExecutors"] : ["ServiceLifecycle", "Metrics", "Tracing"]
        ),
        // No default traits: the example needs neither swift-configuration nor full Foundation.
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1", traits: []),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
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
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Instrumentation", package: "swift-distributed-tracing"),
            ],
            swiftSettings: [
                .swiftLanguageMode(.v6),
                .enableUpcomingFeature("ExistentialAny"),
            ] + (onLoops ? [.define("LOOP_EXECUTOR_FACTORY"), .unsafeFlags(["-Xfrontend", "-disable-availability-checking"])] : [])
        )
    ]
)
