import Dispatch
import Scheduling
import Synchronization

/// What one pass of `rearm` measured.
@_spi(Workloads)
public typealias RearmRun = (
    /// One operation: push one pending timer back to now + 30 s.
    nanosecondsPerOperation: Double,
    /// Heap bytes per pending re-armable timer as the ring filled.
    bytesPerTimer: Double,
    /// Heap bytes in use after the operations minus before them, per operation: 0 when a re-arm
    /// keeps nothing (what it allocates it frees again: see the malloc counts in Benchmarks/).
    bytesKeptPerOperation: Double
)

@_spi(Workloads)
extension Workloads {
    /// `rearm`, one pass, on the calling thread: `n` pending timers 30 s out from `make`, then
    /// `operations` operations that each push one back to now + 30 s — the oldest first (ring
    /// order), or with `random` one drawn from `generator` — then disposes them all.
    ///
    /// The timer each operation pushes back is drawn before the clock starts, into a stream of
    /// handles in operation order: a server re-arms the idle timeout of the connection whose
    /// request it just read, with that connection's handle at hand. An operation then pays for the
    /// timer (its first touch) and the store, not for finding the handle in a ring of millions —
    /// a miss the CPU overlaps with the previous operation in the C floor's loop but not in
    /// Swift's, where the handle's retain and release fence it. The C floor's `rearm` draws its
    /// stream the same way, and `loopsched bound` measures this harness with no store.
    public static func rearm<Generator: RandomNumberGenerator>(
        pending n: Int,
        random: Bool,
        generator: inout Generator,
        operations: Int = churnOperations,
        make: () -> any RearmableTimer
    ) -> RearmRun {
        var ring: [any RearmableTimer] = []
        ring.reserveCapacity(n)
        let before = Measure.heapBytesInUse()
        for _ in 0..<n { ring.append(make()) }
        let bytes = Double(Measure.heapBytesInUse() - before) / Double(n)
        var next = 0
        var stream: [any RearmableTimer] = []
        stream.reserveCapacity(operations)
        for _ in 0..<operations { stream.append(ring[pick(in: n, random: random, generator: &generator, next: &next)]) }
        let held = Measure.heapBytesInUse()
        let start = Measure.now()
        for timer in stream { timer.rearm(after: .seconds(30)) }
        let perOperation = Double(Measure.now() - start) / Double(operations)
        let kept = Double(Measure.heapBytesInUse() - held) / Double(operations)
        for timer in ring { timer.dispose() }
        return (perOperation, bytes, kept)
    }

    /// `rearm` on `scheduler`: on its own thread (in an action on it, as an actor pinned to a loop
    /// re-arms its idle timeouts), or from another thread with `fromOtherThread`. `strayFires`
    /// counts a timer that fired (none may).
    public static func rearm<Generator: RandomNumberGenerator & Sendable>(
        _ scheduler: any DateScheduler,
        pending n: Int,
        random: Bool,
        generator: Generator,
        fromOtherThread: Bool = false,
        strayFires: Tally
    ) -> RearmRun {
        Measure.trimHeap()
        let result = Mutex<RearmRun>((0, 0, 0))
        let body: @Sendable () -> Void = {
            var generator = generator
            let run = rearm(pending: n, random: random, generator: &generator) {
                scheduler.scheduleRearmable(after: .seconds(30)) { strayFires.add() }
            }
            result.withLock { $0 = run }
        }
        if fromOtherThread {
            body()
        } else {
            let done = DispatchSemaphore(value: 0)
            scheduler.schedule {
                body()
                done.signal()
            }
            done.wait()
        }
        return result.withLock { $0 }
    }

    /// What one pass of `rearm-fire` measured: the fire path of re-armed timers.
    public typealias RearmFireRun = (cpuNanosecondsPerTimer: Double, early: Int, fired: Int)

    /// `rearm-fire`, one pass, on a serial scheduler: `n` timers due at now + `delay` ms, each
    /// pushed back `pushes` times to now + `delay` in one action on the scheduler — with `rearm`,
    /// or with `dispose` and a new `schedule` when `rearms` is false — then fired. A lazily
    /// re-armed timer moves when its first bucket comes due: this is where that deferred work is
    /// paid. Reports the process's CPU time from the first fire to the last, per timer (the fire
    /// path, with its bucket moves and wake-ups; the process's, not a thread's, because a
    /// `QueueScheduler`'s queue may run its timers on several threads, and nothing else runs
    /// meanwhile), and the timers that fired before their last deadline.
    public static func rearmFire(
        _ scheduler: any DateScheduler,
        _ n: Int,
        delayMilliseconds delay: Int,
        pushes: Int,
        rearms: Bool
    ) -> RearmFireRun {
        Measure.trimHeap()
        let early = Atomic<Int>(0)
        let fired = Atomic<Int>(0)
        let cpu = Mutex<(first: Double, last: Double)>((0, 0))
        let allFired = DispatchSemaphore(value: 0)
        let deadlines = Mutex<[Int64]>([])
        scheduler.schedule {
            let nanoseconds = Int64(delay) * 1_000_000
            var due = [Int64](repeating: 0, count: n)
            func action(_ index: Int) -> @Sendable () -> Void {
                {
                    let count = fired.add(1, ordering: .relaxed).newValue
                    if count == 1 { cpu.withLock { $0.first = Measure.processCPUSeconds() } }
                    if Nanoseconds.monotonicNow() < deadlines.withLock({ $0[index] }) { early.add(1, ordering: .relaxed) }
                    if count == n {
                        cpu.withLock { $0.last = Measure.processCPUSeconds() }
                        allFired.signal()
                    }
                }
            }
            var rearmable: [any RearmableTimer] = []
            var plain: [any Disposable] = []
            for index in 0..<n {
                due[index] = Nanoseconds.monotonicNow() + nanoseconds
                if rearms {
                    rearmable.append(scheduler.scheduleRearmable(after: .milliseconds(delay), action(index)))
                } else {
                    plain.append(scheduler.schedule(after: .milliseconds(delay), action(index)))
                }
            }
            for _ in 0..<pushes {
                for index in 0..<n {
                    due[index] = Nanoseconds.monotonicNow() + nanoseconds
                    if rearms {
                        rearmable[index].rearm(after: .milliseconds(delay))
                    } else {
                        plain[index].dispose()
                        plain[index] = scheduler.schedule(after: .milliseconds(delay), action(index))
                    }
                }
            }
            // Before this action returns, so before any of them can fire (a serial scheduler).
            deadlines.withLock { $0 = due }
        }
        allFired.wait()
        let (first, last) = cpu.withLock { $0 }
        return ((last - first) * 1e9 / Double(n), early.load(ordering: .relaxed), fired.load(ordering: .relaxed))
    }
}
