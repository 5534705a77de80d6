import Synchronization

/// What one pass of `timeouts-churn` measured.
@_spi(Workloads)
public typealias ChurnRun = (
    /// One operation: cancel a pending timeout, schedule one in its place.
    nanosecondsPerOperation: Double,
    /// Heap bytes per pending timeout as the ring filled (the timer, its action and its store
    /// slot; not the ring of handles).
    bytesPerTimer: Double
)

@_spi(Workloads)
extension Workloads {
    /// `timeouts-churn`, one pass, on the calling thread (the system's own: an action on it): what
    /// the library exists for, a timeout per request and nearly all of them cancelled. Fills a ring
    /// of `n` pending timeouts with `arm`, then runs `operations` operations that each `cancel` one
    /// — the oldest, or with `random` one drawn from `generator` — and `arm` one in its place;
    /// then cancels the ring.
    @inlinable
    public static func churn<Handle, Generator: RandomNumberGenerator>(
        pending n: Int,
        random: Bool,
        generator: inout Generator,
        operations: Int = churnOperations,
        arm: () -> Handle,
        cancel: (Handle) -> Void
    ) -> ChurnRun {
        var ring: [Handle] = []
        ring.reserveCapacity(n)
        let before = Measure.heapBytesInUse()
        for _ in 0..<n { ring.append(arm()) }
        let bytes = Double(Measure.heapBytesInUse() - before) / Double(n)
        var next = 0
        let start = Measure.now()
        for _ in 0..<operations {
            let index = pick(in: n, random: random, generator: &generator, next: &next)
            cancel(ring[index])
            ring[index] = arm()
        }
        let perOperation = Double(Measure.now() - start) / Double(operations)
        for handle in ring { cancel(handle) }
        return (nanosecondsPerOperation: perOperation, bytesPerTimer: bytes)
    }

    /// The ring position an operation works on: the oldest (`next`, cycling), or with `random` one
    /// drawn from `generator`. What `timeouts-churn` and `rearm` share, so their orders match.
    @inlinable @inline(__always)
    public static func pick<Generator: RandomNumberGenerator>(
        in n: Int,
        random: Bool,
        generator: inout Generator,
        next: inout Int
    ) -> Int {
        if random { return Int(generator.next() % UInt64(n)) }
        defer { next = next + 1 == n ? 0 : next + 1 }
        return next
    }

    /// `timeouts-churn`, one pass, with 30 s timeouts on `system`: ``churn(pending:random:generator:operations:arm:cancel:)``
    /// in an action on it, after the harness's preparation.
    @inlinable
    public static func timeoutsChurn<System: WorkloadSystem, Generator: RandomNumberGenerator & Sendable>(
        _ system: System,
        pending n: Int,
        random: Bool,
        generator: Generator,
        harness: TimerHarness
    ) -> ChurnRun {
        if harness.trimsHeap {
            Measure.trimHeap()
            system.roundTrip()
        }
        let result = Mutex<ChurnRun>((nanosecondsPerOperation: 0, bytesPerTimer: 0))
        system.onScheduler {
            var generator = generator
            let run = churn(
                pending: n,
                random: random,
                generator: &generator,
                arm: { harness.neverFiring(system, afterNanoseconds: 30_000_000_000) },
                cancel: { system.cancel($0) }
            )
            result.withLock { $0 = run }
        }
        return result.withLock { $0 }
    }
}
