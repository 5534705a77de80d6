/// When a timer store's debug build checks its invariants
/// (``WheeledHeap/assertSound(with:sampler:mayAwaitRearm:owner:)``): the check visits every slot,
/// so it runs once per so many calls that it costs ``visitsPerCall`` slot visits per call on
/// average, whatever the store holds: every sixth call or so while the store is small (its 384
/// buckets are most of it), once per tens of thousands of calls at a million timers.
package struct InvariantSampler: Sendable {
    private var credit = 0

    /// Slot visits a call pays for: a few microseconds of a debug build.
    package static let visitsPerCall = 64

    package init() {}

    /// Whether to check now a store whose check visits `size` slots.
    package mutating func isDue(size: Int) -> Bool {
        credit &+= Self.visitsPerCall
        guard credit >= size else { return false }
        credit = 0
        return true
    }
}
