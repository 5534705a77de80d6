#if CommandLineTool
import ArgumentParser

/// A `--workload` value. The timer workloads (Docs/Design.md §7) and the async ones (§8) compare different
/// systems and report different figures, so they are two types; one option selects from both.
enum WorkloadSelection: Hashable, CaseIterable, ExpressibleByArgument {
    case timers(Workload)
    case async(AsyncWorkload)
    case tracing(TracingWorkload)
    #if NIO
    case nio(NIOWorkload)
    #endif

    static var allCases: [WorkloadSelection] {
        var cases =
            Workload.allCases.map(Self.timers) + AsyncWorkload.allCases.map(Self.async)
            + TracingWorkload.allCases.map(Self.tracing)
        #if NIO
        cases += NIOWorkload.allCases.map(Self.nio)
        #endif
        return cases
    }

    init?(argument: String) {
        if let workload = Workload(rawValue: argument) {
            self = .timers(workload)
        } else if let workload = AsyncWorkload(rawValue: argument) {
            self = .async(workload)
        } else if let workload = TracingWorkload(rawValue: argument) {
            self = .tracing(workload)
        } else {
            #if NIO
            guard let workload = NIOWorkload(rawValue: argument) else { return nil }
            self = .nio(workload)
            #else
            return nil
            #endif
        }
    }

    var name: String {
        switch self {
        case .timers(let workload): workload.rawValue
        case .async(let workload): workload.rawValue
        case .tracing(let workload): workload.rawValue
        #if NIO
        case .nio(let workload): workload.rawValue
        #endif
        }
    }

    var summary: String {
        switch self {
        case .timers(let workload): workload.summary
        case .async(let workload): workload.summary
        case .tracing(let workload): workload.summary
        #if NIO
        case .nio(let workload): workload.summary
        #endif
        }
    }

    static var allValueStrings: [String] { allCases.map(\.name) }
}
#endif
