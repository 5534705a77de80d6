internal import CProcessStats
import Foundation

/// Readings the workloads take of the process.
@_spi(Workloads)
public enum Measure {
    /// Monotonic nanoseconds (`CLOCK_MONOTONIC`: the clock of `DispatchTime`, of a monotonic
    /// timerfd and of SwiftNIO's `NIODeadline`). Inlinable, so an action being measured reads the
    /// clock without a call into this module.
    @inlinable
    public static func now() -> Int64 {
        var now = timespec()
        let rc = clock_gettime(CLOCK_MONOTONIC, &now)
        precondition(rc == 0, "clock_gettime(CLOCK_MONOTONIC) failed: errno \(errno)")
        return Int64(now.tv_sec) &* 1_000_000_000 &+ Int64(now.tv_nsec)
    }

    /// CPU time of the calling thread, in nanoseconds (`CLOCK_THREAD_CPUTIME_ID`).
    public static func threadCPUNanoseconds() -> Int64 {
        var now = timespec()
        let rc = clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now)
        precondition(rc == 0, "clock_gettime(CLOCK_THREAD_CPUTIME_ID) failed: errno \(errno)")
        return Int64(now.tv_sec) &* 1_000_000_000 &+ Int64(now.tv_nsec)
    }

    /// User plus system CPU time of the whole process, in seconds.
    public static func processCPUSeconds() -> Double {
        process_stats_cpu_seconds()
    }

    /// Bytes the allocator has handed out and not had back (small blocks plus mmapped ones, glibc's
    /// `mallinfo2`). Unlike the resident set size it does not depend on how freed pages are
    /// returned.
    public static func heapBytesInUse() -> Int {
        Int(process_stats_heap_bytes_in_use())
    }

    /// Keeps freed memory in the process for the whole run: see `process_stats_keep_freed_heap`.
    public static func keepFreedHeap() -> Bool {
        process_stats_keep_freed_heap() == 0
    }

    /// Gives freed memory back to the system so successive readings start from the same place.
    public static func trimHeap() {
        process_stats_trim_heap()
    }
}
