#if CommandLineTool
import Scheduling
import Synchronization

/// `timeouts-churn`: what the library exists for, a timeout per request and nearly all of them
/// cancelled. A steady state of `n` pending 30 s timeouts, scheduled on the scheduler; each of 1M
/// operations cancels one (the oldest, then in a second pass a random one) and schedules one in
/// its place. ns per operation, and heap bytes per pending timer (entry, closure context and
/// store slot; not the harness's array of disposables).
extension Workload {
    static let churnOperations = 1_000_000

    static func timeoutsChurn(_ target: RunningTarget, _ n: Int) -> Sample {
        var sample = Sample()
        let fired = Atomic<Int>(0)
        let scheduler = target.scheduler
        for random in [false, true] {
            Measure.trimHeap()
            target.roundTrip()
            let result = LockedValue<(perOp: Double, bytes: Double)>((0, 0))
            target.onScheduler {
                var ring: [any Disposable] = []
                ring.reserveCapacity(n)
                let before = Measure.heapBytesInUse()
                for _ in 0..<n {
                    ring.append(scheduler.schedule(after: .seconds(30)) { fired.add(1, ordering: .relaxed) })
                }
                let bytes = Double(Measure.heapBytesInUse() - before) / Double(n)
                var generator = SplitMix(seed: 7)
                var next = 0
                let start = Measure.now()
                for _ in 0..<churnOperations {
                    let index: Int
                    if random {
                        index = Int(generator.next() % UInt64(n))
                    } else {
                        index = next
                        next = next + 1 == n ? 0 : next + 1
                    }
                    ring[index].dispose()
                    ring[index] = scheduler.schedule(after: .seconds(30)) { fired.add(1, ordering: .relaxed) }
                }
                let perOp = Double(Measure.now() - start) / Double(churnOperations)
                for disposable in ring { disposable.dispose() }
                result.withLock { $0 = (perOp, bytes) }
            }
            let (perOp, bytes) = result.withLock { $0 }
            sample.metrics[random ? "ns/op random" : "ns/op fifo"] = perOp
            if !random { sample.metrics["bytes/timer"] = bytes }
        }
        target.roundTrip()
        let firedCount = fired.load(ordering: .relaxed)
        if firedCount > 0 { sample.failures.append("\(firedCount) cancelled timeouts fired") }
        return sample
    }
}
#endif
