import Synchronization

/// A count that actions and tasks on any thread add to.
@_spi(Workloads)
public final class Tally: Sendable {
    @usableFromInline let value = Atomic<Int>(0)

    /// A tally at zero.
    public init() {}

    /// Adds one (relaxed: read only once the adders are done). Inlinable: it runs inside the
    /// actions being measured.
    @inlinable
    public func add() { value.add(1, ordering: .relaxed) }

    /// The count so far.
    public var count: Int { value.load(ordering: .relaxed) }
}
