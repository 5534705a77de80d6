#if CommandLineTool
import ArgumentParser

/// A `--workload` value. The timer workloads (Docs/Design.md §7) and the async ones (§8) compare different
/// systems and report different figures, so they are two types; one option selects from both.
enum WorkloadSelection: Hashable, CaseIterable, ExpressibleByArgument {
    case timers(Workload)
    case async(AsyncWorkload)
    case tracing(TracingWorkload)

    static var allCases: [WorkloadSelection] {
        Workload.allCases.map(Self.timers) + AsyncWorkload.allCases.map(Self.async)
            + TracingWorkload.allCases.map(Self.tracing)
    }

    init?(argument: String) {
        if let workload = Workload(rawValue: argument) {
            self = .timers(workload)
        } else if let workload = AsyncWorkload(rawValue: argument) {
            self = .async(workload)
        } else if let workload = TracingWorkload(rawValue: argument) {
            self = .tracing(workload)
        } else {
            return nil
        }
    }

    var name: String {
        switch self {
        case .timers(let workload): workload.rawValue
        case .async(let workload): workload.rawValue
        case .tracing(let workload): workload.rawValue
        }
    }

    var summary: String {
        switch self {
        case .timers(let workload): workload.summary
        case .async(let workload): workload.summary
        case .tracing(let workload): workload.summary
        }
    }

    static var allValueStrings: [String] { allCases.map(\.name) }
}
#endif
