// swift-tools-version:6.1
import PackageDescription

let strictSettings: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .enableUpcomingFeature("ExistentialAny"),
]

let package = Package(
    name: "swift-schedulers",
    products: [
        .library(name: "Scheduling", targets: ["Scheduling"]),
        .library(name: "LoopScheduling", targets: ["LoopScheduling"]),
        .library(name: "SchedulingCombine", targets: ["SchedulingCombine"]),
        .library(name: "SchedulingServiceLifecycle", targets: ["SchedulingServiceLifecycle"]),
        .library(name: "LoopSchedulingMetrics", targets: ["LoopSchedulingMetrics"]),
        .executable(name: "loopsched", targets: ["loopsched"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        // The integrations only (DESIGN 9): `Scheduling` and `LoopScheduling` depend on none of these.
        .package(url: "https://github.com/OpenCombine/OpenCombine", from: "0.14.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        // Test-only: a real client of `SchedulerClock` (debounce, AsyncTimerSequence) in the tests.
        .package(url: "https://github.com/apple/swift-async-algorithms", from: "1.1.4"),
    ],
    targets: [
        .systemLibrary(
            name: "CLibUV",
            path: "CLibUV",
            pkgConfig: "libuv",
            providers: [.apt(["libuv1-dev"]), .brew(["libuv"])]
        ),
        .target(name: "Scheduling", swiftSettings: strictSettings),
        .target(name: "LoopScheduling", dependencies: ["Scheduling", "CLibUV"], swiftSettings: strictSettings),
        .target(name: "CProcessStats"),
        .target(
            name: "SchedulingCombine",
            dependencies: ["Scheduling", .product(name: "OpenCombine", package: "OpenCombine")],
            swiftSettings: strictSettings
        ),
        .target(
            name: "SchedulingServiceLifecycle",
            dependencies: [
                "Scheduling", "LoopScheduling",
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strictSettings
        ),
        .target(
            name: "LoopSchedulingMetrics",
            dependencies: [
                "Scheduling", "LoopScheduling",
                .product(name: "CoreMetrics", package: "swift-metrics"),
            ],
            swiftSettings: strictSettings
        ),
        .executableTarget(
            name: "loopsched",
            dependencies: [
                "Scheduling", "LoopScheduling", "CProcessStats",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: strictSettings
        ),
        // A process of its own for the tests at the process's descriptor and thread limits, which
        // must measure the process before anything touched Dispatch (run by LoopProcessLimitTests).
        .executableTarget(
            name: "LoopLimitsProbe",
            dependencies: ["LoopScheduling", "Scheduling"],
            path: "Tests/LoopLimitsProbe",
            swiftSettings: strictSettings
        ),
        // Test fixtures shared by the test targets (a host program owning a libuv loop).
        .target(
            name: "LoopSchedulingTestSupport",
            dependencies: ["LoopScheduling", "Scheduling"],
            path: "Tests/LoopSchedulingTestSupport",
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "SchedulingTests",
            dependencies: [
                "Scheduling", "LoopSchedulingTestSupport",
                .product(name: "AsyncAlgorithms", package: "swift-async-algorithms"),
            ],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "LoopSchedulingTests",
            dependencies: [
                "LoopScheduling", "Scheduling", "LoopSchedulingTestSupport", "LoopLimitsProbe",
                .product(name: "AsyncAlgorithms", package: "swift-async-algorithms"),
            ],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "ConformanceTests",
            dependencies: ["Scheduling", "LoopScheduling", "LoopSchedulingTestSupport"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "SchedulingCombineTests",
            dependencies: [
                "SchedulingCombine", "Scheduling", "LoopScheduling", "LoopSchedulingTestSupport",
                .product(name: "OpenCombine", package: "OpenCombine"),
            ],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "SchedulingServiceLifecycleTests",
            dependencies: [
                "SchedulingServiceLifecycle", "Scheduling", "LoopScheduling", "LoopSchedulingTestSupport",
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "LoopSchedulingMetricsTests",
            dependencies: [
                "LoopSchedulingMetrics", "Scheduling", "LoopScheduling", "LoopSchedulingTestSupport",
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "MetricsTestKit", package: "swift-metrics"),
            ],
            swiftSettings: strictSettings
        ),
    ]
)
