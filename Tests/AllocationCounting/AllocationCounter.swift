import CAllocationCounter

/// Calls into the allocator (see allocation_counter.h for what counts as which).
public struct AllocationCounts: Sendable, Equatable {
    /// malloc, calloc, the aligned variants, and a realloc that allocates.
    public var mallocs: Int
    /// free of a non-null pointer, and a realloc that frees.
    public var frees: Int

    init(_ counts: allocation_counts) {
        mallocs = Int(counts.mallocs)
        frees = Int(counts.frees)
    }

    init(mallocs: Int, frees: Int) {
        self.mallocs = mallocs
        self.frees = frees
    }

    static func - (lhs: AllocationCounts, rhs: AllocationCounts) -> AllocationCounts {
        AllocationCounts(mallocs: lhs.mallocs - rhs.mallocs, frees: lhs.frees - rhs.frees)
    }
}

/// The malloc interposer's counts: per thread, through slots, and for the whole process.
public enum AllocationCounter {
    /// The slot of the probe's own thread (the one that calls ``AllocationReport/start(probe:)``).
    public static let callerSlot: Int32 = 0
    /// The slot of the event loop's thread, for paths that count it apart.
    public static let loopSlot: Int32 = 1

    /// Nil when the interposer is compiled in; otherwise why not ("sanitizer", "not glibc").
    public static var disabledReason: String? {
        allocation_counter_disabled_reason().map { String(cString: $0) }
    }

    /// Puts the calling thread's counters in `slot`: call it on the loop's thread (in an action).
    public static func registerCurrentThread(as slot: Int32) {
        allocation_counter_register(slot)
    }

    /// Empties `slot`: call it before the thread registered there exits.
    public static func clear(_ slot: Int32) {
        allocation_counter_clear(slot)
    }

    /// The counts of the thread in `slot`.
    public static func counts(of slot: Int32) -> AllocationCounts {
        AllocationCounts(allocation_counter_slot(slot))
    }

    /// Every thread's counts.
    public static var process: AllocationCounts {
        AllocationCounts(allocation_counter_process())
    }
}
