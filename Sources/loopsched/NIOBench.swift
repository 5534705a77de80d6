#if CommandLineTool && NIO
import ArgumentParser
import LoopScheduling
@_spi(Workloads) import SchedulingWorkloads

/// One row group of the SwiftNIO comparison: a workload at one pending count.
struct NIORow: Hashable, Comparable {
    let workload: NIOWorkload
    let n: Int

    static func < (a: NIORow, b: NIORow) -> Bool {
        let order = NIOWorkload.allCases
        return (order.firstIndex(of: a.workload)!, a.n) < (order.firstIndex(of: b.workload)!, b.n)
    }
}

/// Runs the SwiftNIO comparison: every repetition runs each workload at each size on every
/// system, a fresh system each time, the systems' order reversed every other repetition so that
/// none always runs on a warmer (or busier) machine. Each system runs alone: one event loop
/// thread at a time.
struct NIOBench {
    let workloads: [NIOWorkload]
    let repetitions: Int
    /// One pending count for every workload instead of each one's defaults.
    let size: Int?
    /// The systems, in the order of the even repetitions.
    let systems: [EventLoopSystemKind]
    let seed: UInt64
    let driver: TimerDriverKind

    typealias Samples = [NIORow: [EventLoopSystemKind: [Sample]]]

    var rows: [NIORow] {
        workloads.flatMap { workload in
            (size.map { [$0] } ?? workload.defaultSizes).map { NIORow(workload: workload, n: $0) }
        }
    }

    var runCount: Int {
        repetitions
            * rows.reduce(0) { count, row in
                count + systems.count { row.workload.runs(on: $0) }
            }
    }

    func run(progress: Progress) -> Samples {
        var samples: Samples = [:]
        for repetition in 0..<repetitions {
            let order = repetition % 2 == 0 ? systems : systems.reversed()
            for row in rows {
                for system in order where row.workload.runs(on: system) {
                    progress.step("\(row.workload.rawValue) n=\(Report.count(row.n)) on \(system.rawValue)")
                    let sample = row.workload.run(
                        on: system,
                        size: row.n,
                        seed: seed &+ UInt64(repetition),
                        driver: driver
                    )
                    samples[row, default: [:]][system, default: []].append(sample)
                }
            }
        }
        return samples
    }
}
/// A `--nio-system` value: a short name of each system of the comparison.
extension EventLoopSystemKind: ExpressibleByArgument {
    var argument: String {
        switch self {
        case .eventLoopScheduler: "els"
        case .nioScheduleTask: "nio-task"
        case .nioScheduleCallback: "nio-callback"
        case .loopScheduler: "loop"
        }
    }

    public init?(argument: String) {
        guard let kind = Self.allCases.first(where: { $0.argument == argument }) else { return nil }
        self = kind
    }

    public static var allValueStrings: [String] { allCases.map(\.argument) }
}
#endif
