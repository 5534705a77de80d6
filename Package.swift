// swift-tools-version:6.1
import PackageDescription

let strictSettings: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .enableUpcomingFeature("ExistentialAny"),
]

// Package traits (SwiftPM 6.1+): every integration is off by default, so a package that depends on
// `Scheduling` or `LoopScheduling` with a plain `.package(url:from:)` line resolves no other package
// (since SwiftPM 6.2 a dependency used only behind a disabled trait is left out of resolution; test
// targets' dependencies are never resolved for a dependent). An integration's module is empty
// unless its trait is enabled. The repository's own builds (`make`) enable them all.
let integrationTraitNames: Set<String> = ["OpenCombine", "ServiceLifecycle", "Metrics", "Tracing", "NIO"]
let integrationTraits: Set<Trait> = [
    .trait(name: "OpenCombine", description: "SchedulingCombine: any DateScheduler as an OpenCombine Scheduler."),
    .trait(
        name: "ServiceLifecycle",
        description: "SchedulingServiceLifecycle: loops as swift-service-lifecycle services."
    ),
    .trait(name: "Metrics", description: "LoopSchedulingMetrics: loop statistics through swift-metrics."),
    .trait(name: "Tracing", description: "SchedulingTracing: ServiceContext carried from schedule into the action."),
    .trait(
        name: "NIO",
        description: "SchedulingNIO: the scheduler's timer kernel on SwiftNIO event loops (EventLoopScheduler)."
    ),
]

let buildsDocumentationForSPI = Context.environment["SPI_GENERATE_DOCS"] != nil
let traits: Set<Trait> = integrationTraits.union([
    .trait(
        name: "CommandLineTool",
        description:
            "The loopsched benchmark and cross-check tool (swift-argument-parser); for this repository's own builds.",
        enabledTraits: ["Tracing"]
    ),
    // Not an integration: left out of the documentation builds and of the repository's usual set.
    .trait(
        name: "ExperimentalExecutors",
        description:
            "Experimental: a plain Task.sleep in a task that prefers a scheduler wakes from the scheduler's timers, "
            + "through Swift's unsettled executor SPIs (SchedulingExecutor; SE-0505 was returned for revision). "
            + "Linux only: elsewhere it compiles nothing. The next toolchain may not compile it."
    ),
    // The Swift Package Index builds the documentation with every integration in it.
    .default(enabledTraits: buildsDocumentationForSPI ? integrationTraitNames : Set<String>()),
])

let package = Package(
    name: "swift-schedulers",
    products: [
        .library(name: "Scheduling", targets: ["Scheduling"]),
        .library(name: "LoopScheduling", targets: ["LoopScheduling"]),
        .library(name: "SchedulingCombine", targets: ["SchedulingCombine"]),
        .library(name: "SchedulingServiceLifecycle", targets: ["SchedulingServiceLifecycle"]),
        .library(name: "LoopSchedulingMetrics", targets: ["LoopSchedulingMetrics"]),
        .library(name: "SchedulingTracing", targets: ["SchedulingTracing"]),
        .library(name: "SchedulingNIO", targets: ["SchedulingNIO"]),
        // Not API: the benchmark workloads that `loopsched`, `Benchmarks/` and
        // `Examples/TimeoutServer` share. A product only because those two are packages of their
        // own; everything in it is `@_spi(Workloads)`, so a plain `import` sees nothing, and it
        // may change in any release. Not in the documentation (scripts/docs.sh, .spi.yml).
        .library(name: "SchedulingWorkloads", targets: ["SchedulingWorkloads"]),
        .executable(name: "loopsched", targets: ["loopsched"]),
    ],
    traits: traits,
    dependencies: [
        // loopsched only (trait CommandLineTool).
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        // The integrations only, each behind its trait (Docs/Design.md §9): `Scheduling` and
        // `LoopScheduling` depend on none of these.
        .package(url: "https://github.com/OpenCombine/OpenCombine", from: "0.14.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        // `Instrumentation` holds `ServiceContext`; the tests use its `InMemoryTracing` too.
        .package(url: "https://github.com/apple/swift-distributed-tracing", from: "1.7.3"),
        // SchedulingNIO (NIOCore only; NIOPosix and NIOEmbedded in its tests). From the Benchmarks'
        // pin up, so the two packages resolve one version together.
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        // Test-only: swift-log for the service-lifecycle tests' loggers, swift-async-algorithms as a
        // real client of `SchedulerClock` (debounce, AsyncTimerSequence).
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
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
        // The loop engine, without libuv or SwiftNIO: the batches, the remote queue, the timer store
        // and its path, shutdown. LoopScheduling runs it on libuv; no product of its own.
        .target(name: "LoopEngine", dependencies: ["Scheduling"], swiftSettings: strictSettings),
        .target(name: "LoopScheduling", dependencies: ["Scheduling", "LoopEngine", "CLibUV"], swiftSettings: strictSettings),
        .target(name: "CProcessStats"),
        .target(
            name: "SchedulingCombine",
            dependencies: [
                "Scheduling",
                .product(name: "OpenCombine", package: "OpenCombine", condition: .when(traits: ["OpenCombine"])),
            ],
            swiftSettings: strictSettings
        ),
        .target(
            name: "SchedulingServiceLifecycle",
            dependencies: [
                "Scheduling", "LoopScheduling",
                .product(
                    name: "ServiceLifecycle",
                    package: "swift-service-lifecycle",
                    condition: .when(traits: ["ServiceLifecycle"])
                ),
            ],
            swiftSettings: strictSettings
        ),
        .target(
            name: "LoopSchedulingMetrics",
            dependencies: [
                "Scheduling", "LoopScheduling",
                .product(name: "CoreMetrics", package: "swift-metrics", condition: .when(traits: ["Metrics"])),
            ],
            swiftSettings: strictSettings
        ),
        .target(
            name: "SchedulingTracing",
            dependencies: [
                "Scheduling",
                .product(
                    name: "Instrumentation",
                    package: "swift-distributed-tracing",
                    condition: .when(traits: ["Tracing"])
                ),
            ],
            swiftSettings: strictSettings
        ),
        .target(
            name: "SchedulingNIO",
            dependencies: [
                "Scheduling", "LoopEngine",
                .product(name: "NIOCore", package: "swift-nio", condition: .when(traits: ["NIO"])),
            ],
            swiftSettings: strictSettings
        ),
        // The benchmark workloads (not API, see the product): this package's targets only, so a
        // package using it resolves nothing more; with the trait NIO also the systems of the
        // SwiftNIO comparisons (EventLoopScheduler, SwiftNIO's own timers on a NIOPosix loop).
        .target(
            name: "SchedulingWorkloads",
            dependencies: [
                "Scheduling", "LoopScheduling", "CProcessStats",
                .target(name: "SchedulingNIO", condition: .when(traits: ["NIO"])),
                .product(name: "NIOCore", package: "swift-nio", condition: .when(traits: ["NIO"])),
                .product(name: "NIOPosix", package: "swift-nio", condition: .when(traits: ["NIO"])),
            ],
            swiftSettings: strictSettings
        ),
        // `loopsched bench`'s SwiftNIO comparisons (Sources/loopsched/NIO*.swift, trait NIO) reach
        // SwiftNIO and SchedulingNIO through SchedulingWorkloads, where they are conditioned on it.
        .executableTarget(
            name: "loopsched",
            dependencies: [
                "Scheduling", "LoopScheduling", "SchedulingWorkloads", "SchedulingTracing",
                .product(
                    name: "ArgumentParser",
                    package: "swift-argument-parser",
                    condition: .when(traits: ["CommandLineTool"])
                ),
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
        // The allocation guard (`make test-allocations`, Tests/AllocationLimits/limits.txt): a malloc
        // interposer, the counting and reporting its probes share, and this package's probe, built in
        // release. Executables only: no library product and no test target depends on them, so the
        // interposer never reaches a user or the test bundle (the sanitizer builds compile it out).
        .target(name: "CAllocationCounter", path: "Tests/AllocationCounter"),
        .target(
            name: "AllocationCounting",
            dependencies: ["CAllocationCounter"],
            path: "Tests/AllocationCounting",
            swiftSettings: strictSettings
        ),
        // The paths every probe of a scheduler measures (timers, tasks, sleeps, timeouts, actors).
        .target(
            name: "AllocationPaths",
            dependencies: ["AllocationCounting", "LoopScheduling", "Scheduling", "SchedulingWorkloads"],
            path: "Tests/AllocationPaths",
            swiftSettings: strictSettings
        ),
        .executableTarget(
            name: "AllocationProbe",
            dependencies: ["AllocationCounting", "AllocationPaths", "LoopScheduling", "Scheduling", "SchedulingWorkloads"],
            path: "Tests/AllocationProbe",
            swiftSettings: strictSettings
        ),
        // EventLoopScheduler's probe, on a NIOPosix loop: SwiftNIO and SchedulingNIO only with the
        // trait NIO (without it the probe says so and fails; `make test-allocations` enables it).
        .executableTarget(
            name: "AllocationProbeNIO",
            dependencies: [
                "AllocationCounting", "AllocationPaths", "Scheduling", "SchedulingWorkloads",
                .target(name: "SchedulingNIO", condition: .when(traits: ["NIO"])),
                .product(name: "NIOCore", package: "swift-nio", condition: .when(traits: ["NIO"])),
                .product(name: "NIOPosix", package: "swift-nio", condition: .when(traits: ["NIO"])),
            ],
            path: "Tests/AllocationProbeNIO",
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
        // drive's scope: tasks a library starts with a plain `Task {}` run on virtual time. Scheduling and
        // swift-async-algorithms only (debounce and AsyncTimerSequence as the libraries under test).
        .testTarget(
            name: "DriveScopeTests",
            dependencies: [
                "Scheduling",
                .product(name: "AsyncAlgorithms", package: "swift-async-algorithms"),
            ],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "LoopSchedulingTests",
            dependencies: [
                "LoopScheduling", "LoopEngine", "Scheduling", "LoopSchedulingTestSupport", "LoopLimitsProbe",
                .product(name: "AsyncAlgorithms", package: "swift-async-algorithms"),
            ],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "ConformanceTests",
            dependencies: [
                "Scheduling", "LoopScheduling", "LoopSchedulingTestSupport",
                .target(name: "SchedulingNIO", condition: .when(traits: ["NIO"])),
                .product(name: "NIOCore", package: "swift-nio", condition: .when(traits: ["NIO"])),
                .product(name: "NIOPosix", package: "swift-nio", condition: .when(traits: ["NIO"])),
                .product(name: "NIOEmbedded", package: "swift-nio", condition: .when(traits: ["NIO"])),
            ],
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
        .testTarget(
            name: "SchedulingNIOTests",
            dependencies: [
                "SchedulingNIO", "Scheduling", "LoopEngine", "LoopSchedulingTestSupport",
                .product(name: "NIOCore", package: "swift-nio", condition: .when(traits: ["NIO"])),
                .product(name: "NIOPosix", package: "swift-nio", condition: .when(traits: ["NIO"])),
                .product(name: "NIOEmbedded", package: "swift-nio", condition: .when(traits: ["NIO"])),
                .product(name: "NIOHTTP1", package: "swift-nio", condition: .when(traits: ["NIO"])),
            ],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "SchedulingWorkloadsTests",
            dependencies: ["SchedulingWorkloads", "Scheduling", "LoopScheduling", "LoopSchedulingTestSupport"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "SchedulingTracingTests",
            dependencies: [
                "SchedulingTracing", "Scheduling", "LoopScheduling", "LoopSchedulingTestSupport",
                .product(name: "Instrumentation", package: "swift-distributed-tracing"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
            ],
            swiftSettings: strictSettings
        ),
    ]
)
