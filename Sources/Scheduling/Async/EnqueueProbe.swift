/// Counts the jobs each executor was handed, in debug builds only, so a test can check that a
/// trivial task costs exactly one `enqueue` (running a job with the wrong `runSynchronously`
/// variant makes the runtime enqueue it a second time). Release builds record nothing.
package enum EnqueueProbe {
    #if DEBUG
    private static let counts = LockedValue<[ObjectIdentifier: Int]>([:])
    #endif

    /// Records one `enqueue` on `executor`.
    @inline(__always)
    package static func record(_ executor: AnyObject) {
        #if DEBUG
        counts.withLock { $0[ObjectIdentifier(executor), default: 0] += 1 }
        #endif
    }

    /// How many jobs `executor` was handed so far (0 in release builds).
    package static func count(_ executor: AnyObject) -> Int {
        #if DEBUG
        return counts.withLock { $0[ObjectIdentifier(executor)] ?? 0 }
        #else
        return 0
        #endif
    }
}
