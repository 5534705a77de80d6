import Synchronization

/// A shared round-robin counter.
final class Cursor: Sendable {
    private let value = Atomic<Int>(0)

    func next() -> Int {
        value.wrappingAdd(1, ordering: .relaxed).oldValue & Int.max
    }
}
