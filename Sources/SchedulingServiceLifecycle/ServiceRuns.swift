import Scheduling

/// Which loops and groups have been run as services: the "already ran" flag of
/// ``ServiceAlreadyRunError``, kept beside the objects because their module (`LoopScheduling`)
/// knows nothing of services.
///
/// Keyed by `ObjectIdentifier`, and each entry holds the object weakly: an entry whose object is
/// gone is stale, so a new object allocated at a dead one's address can still run. Stale entries
/// are pruned when the table has doubled since the last prune (amortized O(1) per claim).
final class ServiceRuns: Sendable {
    /// The one table of the process.
    static let shared = ServiceRuns()

    private struct Entry: Sendable {
        weak var object: (any AnyObject & Sendable)?
    }

    private struct Table: Sendable {
        var entries: [ObjectIdentifier: Entry] = [:]
        var pruneAt = 16
    }

    private let table = LockedValue(Table())

    /// Marks `object` as run. Throws if it was marked before (by this call's rival too: the lock
    /// orders concurrent claims, and only the first succeeds).
    func claim(_ object: some AnyObject & Sendable, service: @autoclosure () -> String) throws(ServiceAlreadyRunError) {
        let id = ObjectIdentifier(object)
        let claimed = table.withLock { table in
            if let entry = table.entries[id], entry.object === object { return false }
            if table.entries.count >= table.pruneAt {
                table.entries = table.entries.filter { $0.value.object != nil }
                table.pruneAt = max(16, table.entries.count * 2)
            }
            table.entries[id] = Entry(object: object)
            return true
        }
        if !claimed { throw ServiceAlreadyRunError(service: service()) }
    }

    /// Entries held, stale ones included: for the pruning test.
    var count: Int { table.withLock { $0.entries.count } }
}
