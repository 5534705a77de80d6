// swift-tools-version:6.1
import PackageDescription

// The benchmark suite we steer by: the workloads of Docs/Design.md §7 and §8 on LoopScheduler,
// QueueScheduler, SwiftNIO's EventLoop, and raw libuv in C (the floor), measured by
// ordo-one/benchmark (wall time, CPU, mallocs, peak memory).
let package = Package(
    name: "Benchmarks",
    dependencies: [
        .package(name: "swift-schedulers", path: ".."),
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
            swiftSettings: [.swiftLanguageMode(.v6)],
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
    ]
)
