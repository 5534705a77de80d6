// swift-tools-version:6.1
import PackageDescription

// The benchmark suite we steer by: the workloads of Docs/Design.md §7 and §8 on LoopScheduler,
// QueueScheduler, SwiftNIO's EventLoop, and raw libuv in C (the floor), and the side-by-side
// comparison on one SwiftNIO event loop thread (EventLoopScheduler, SwiftNIO's scheduleTask and
// scheduleCallback), measured by ordo-one/benchmark (wall time, CPU, mallocs, peak memory).

/// `BENCHMARKS_EXPERIMENTAL_EXECUTORS=1` (any value but empty or 0): the root package with its trait
/// ExperimentalExecutors, under which a plain `Task.sleep` in a task preferring a LoopScheduler is
/// one of the loop's timers (issue 29), and EXPERIMENTAL_EXECUTORS defined for the benchmarks: a
/// dependency's traits are no compiler conditions in this package, and the benchmarks name the
/// build they ran in. Build it in a scratch path of its own (README), or the two builds rebuild
/// each other.
let experimentalExecutors =
    Context.environment["BENCHMARKS_EXPERIMENTAL_EXECUTORS"].map { !$0.isEmpty && $0 != "0" }
    ?? false

let package = Package(
    name: "Benchmarks",
    dependencies: [
        .package(
            name: "swift-schedulers",
            path: "..",
            // NIO: EventLoopScheduler and the SwiftNIO systems of SchedulingWorkloads.
            traits: experimentalExecutors ? ["NIO", "ExperimentalExecutors"] : ["NIO"]
        ),
        .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.1", traits: ["MallocInterposer"]),
        .package(url: "https://github.com/apple/swift-nio", exact: "2.101.2"),
    ],
    targets: [
        .target(
            name: "CLibUVFloor",
            path: "Sources/CLibUVFloor",
            linkerSettings: [.linkedLibrary("uv"), .linkedLibrary("pthread")]
        ),
        .executableTarget(
            name: "floor-cli",
            dependencies: ["CLibUVFloor"],
            path: "Sources/floor-cli"
        ),
        .executableTarget(
            name: "SchedulerBenchmarks",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "Scheduling", package: "swift-schedulers"),
                .product(name: "LoopScheduling", package: "swift-schedulers"),
                // The workloads, shared with `loopsched bench` (not API: SPI).
                .product(name: "SchedulingWorkloads", package: "swift-schedulers"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                "CLibUVFloor",
            ],
            path: "Benchmarks/SchedulerBenchmarks",
            swiftSettings: [.swiftLanguageMode(.v6)]
                + (experimentalExecutors ? [.define("EXPERIMENTAL_EXECUTORS")] : []),
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
    ]
)
