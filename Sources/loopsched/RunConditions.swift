#if CommandLineTool
import ArgumentParser
import LoopScheduling
@_spi(Workloads) import SchedulingWorkloads

/// `--driver`: the timer driver of every LoopScheduler in a run, so the uv_timer fallback (the
/// only driver off Linux) can be measured here too and not just assumed to be close.
enum DriverChoice: String, CaseIterable, ExpressibleByArgument {
    case timerfd
    case uvTimer = "uv-timer"

    init(_ kind: TimerDriverKind) {
        switch kind {
        case .timerfd: self = .timerfd
        case .uvTimer: self = .uvTimer
        }
    }

    var kind: TimerDriverKind {
        switch self {
        case .timerfd: .timerfd
        case .uvTimer: .uvTimer
        }
    }
}

/// How the allocator was set up. The default is what users get (and what `make run` shows): a
/// process with glibc's own settings. `--warm-heap` keeps freed memory in the process so that a
/// burst does not pay for the kernel zeroing the pages the previous burst gave back; that flatters
/// every system alike, so it is opt-in and named in the report.
enum HeapMode: String {
    case untuned
    case warm
    /// `--warm-heap` was asked for and the allocator refused the settings: the run is untuned.
    case warmRefused = "untuned (mallopt refused)"

    /// Applies the mode to this process; call once, before any workload.
    static func apply(warm: Bool) -> HeapMode {
        guard warm else { return .untuned }
        return Measure.keepFreedHeap() ? .warm : .warmRefused
    }
}

/// What a report must say about how its figures were taken, since both change them.
struct RunConditions {
    let heap: HeapMode
    let driver: DriverChoice

    var summary: String {
        let heapNote =
            switch heap {
            case .untuned: " (glibc defaults; --warm-heap keeps freed memory)"
            case .warm: " (--warm-heap: freed memory kept in the process)"
            case .warmRefused: ""
            }
        let executors = Self.experimentalExecutors ? "on (Task.sleep on a loop is its timer)" : "off"
        return "heap: \(heap.rawValue)\(heapNote); LoopScheduler timer driver: \(driver.rawValue); "
            + "trait ExperimentalExecutors: \(executors)"
    }

    var jsonFields: String {
        "\"heap\": \"\(heap.rawValue)\", \"driver\": \"\(driver.rawValue)\", "
            + "\"experimentalExecutors\": \(Self.experimentalExecutors)"
    }

    /// Whether this build has the package trait ExperimentalExecutors, under which a LoopScheduler
    /// serves the plain `Task.sleep`s of the tasks that prefer it.
    static var experimentalExecutors: Bool {
        #if compiler(>=6.3) && ExperimentalExecutors && os(Linux)
        true
        #else
        false
        #endif
    }
}
#endif
