import Scheduling

/// Per-action values written by index from the system's thread(s), read once they are done.
///
/// Behind Scheduling's `LockedValue` (a pthread mutex), as `loopsched` measured it before the
/// workloads were shared; not inlinable for that reason (the lock box is package-internal).
@_spi(Workloads)
public final class Slots: Sendable {
    private let values: LockedValue<[Int64]>

    /// `count` slots, each `Int64.min` until set.
    public init(count: Int) {
        values = LockedValue(Array(repeating: .min, count: count))
    }

    /// Sets slot `index` (from any thread; a lock per call).
    public func set(_ index: Int, _ value: Int64) { values.withLock { $0[index] = value } }

    /// Every slot, in index order.
    public var all: [Int64] { values.withLock { $0 } }
}
