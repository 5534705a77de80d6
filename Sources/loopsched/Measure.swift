#if CommandLineTool
import CProcessStats
import Foundation
import Scheduling

/// Readings the workloads take of the process.
enum Measure {
    /// Monotonic nanoseconds.
    static func now() -> Int64 { Nanoseconds.monotonicNow() }

    /// User plus system CPU time of the whole process, in seconds.
    static func processCPUSeconds() -> Double {
        process_stats_cpu_seconds()
    }

    /// Bytes the allocator has handed out and not had back (small blocks plus mmapped ones).
    /// Unlike the resident set size it does not depend on how freed pages are returned.
    static func heapBytesInUse() -> Int {
        Int(process_stats_heap_bytes_in_use())
    }

    /// Keeps freed memory in the process for the whole run: see `process_stats_keep_freed_heap`.
    static func keepFreedHeap() -> Bool {
        process_stats_keep_freed_heap() == 0
    }

    /// Gives freed memory back to the system so successive readings start from the same place.
    static func trimHeap() {
        process_stats_trim_heap()
    }
}

/// Order statistics over a sample.
struct Percentiles {
    private let sorted: [Int64]

    init(_ values: [Int64]) {
        sorted = values.sorted()
    }

    var count: Int { sorted.count }

    /// The value at quantile `q` (0…1), nearest rank.
    func value(at q: Double) -> Int64 {
        guard !sorted.isEmpty else { return 0 }
        let rank = Int((q * Double(sorted.count)).rounded(.up)) - 1
        return sorted[Swift.min(Swift.max(rank, 0), sorted.count - 1)]
    }

    var max: Int64 { sorted.last ?? 0 }
    var min: Int64 { sorted.first ?? 0 }
    var values: [Int64] { sorted }
}

func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    guard !sorted.isEmpty else { return .nan }
    let middle = sorted.count / 2
    return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
}
#endif
