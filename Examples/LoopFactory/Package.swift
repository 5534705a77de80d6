// swift-tools-version:6.1
// A program whose main actor and default executor are loops: `typealias DefaultExecutorFactory =
// LoopExecutorFactory` (trait ExperimentalExecutors of swift-schedulers). Its own package because
// Swift 6.3 reads that typealias only in an executable compiled with
// `-Xfrontend -disable-availability-checking`, an unsafe flag a dependency cannot carry.
import PackageDescription

let package = Package(
    name: "LoopFactory",
    dependencies: [
        .package(name: "swift-schedulers", path: "../..", traits: ["ExperimentalExecutors"]),
    ],
    targets: [
        .executableTarget(
            name: "LoopFactoryDemo",
            dependencies: [
                "FactoryBench",
                .product(name: "Scheduling", package: "swift-schedulers"),
                .product(name: "LoopScheduling", package: "swift-schedulers"),
            ],
            swiftSettings: [
                .swiftLanguageMode(.v6),
                // Without it Swift 6.3 ignores `DefaultExecutorFactory` and says nothing.
                .unsafeFlags(["-Xfrontend", "-disable-availability-checking"]),
            ]
        ),
        // The same program on Swift's own executors: FactoryBench's workloads for comparison.
        .executableTarget(name: "DefaultExecutorsBench", dependencies: ["FactoryBench"], swiftSettings: [.swiftLanguageMode(.v6)]),
        .target(
            name: "FactoryBench",
            dependencies: [.product(name: "SchedulingWorkloads", package: "swift-schedulers")],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
    ]
)
