import CLibUVFloor
import Dispatch
import Foundation
import Scheduling

// The async workloads of Docs/Design.md §8, as `loopsched bench` runs them (Sources/loopsched/
// Workloads+*.swift): the same counts, the same callers, the same order of events. Each runs
// synchronously on the benchmark's own thread, which blocks on the tasks it starts: it is not a
// cooperative thread, so blocking it takes nothing from the executors under measurement.

/// Waits on this plain thread for `task`'s value.
func blockingValue<T: Sendable>(of task: Task<T, Never>) -> T {
    let result = LockedValue<T?>(nil)
    let done = DispatchSemaphore(value: 0)
    Task.detached {
        let value = await task.value
        result.withLock { $0 = value }
        done.signal()
    }
    done.wait()
    return result.withLock { $0 }!
}

/// Waits until `scheduler` ran everything queued before this call.
func roundTrip(_ scheduler: some Scheduler) {
    let done = DispatchSemaphore(value: 0)
    scheduler.schedule { done.signal() }
    done.wait()
}

/// A count that tasks on any thread add to.
final class Tally: Sendable {
    private let value = LockedValue(0)
    func add() { value.withLock { $0 += 1 } }
    var count: Int { value.withLock { $0 } }
}

/// An actor with one cheap method, so a call costs the hop and nothing else.
protocol HopTarget: Actor {
    func hop() -> Int
}

/// An actor whose executor is a scheduler or an event loop: every call from elsewhere is a job on it.
actor PinnedCounter: HopTarget {
    private let executor: any SerialExecutor
    private var calls = 0

    init(on executor: any SerialExecutor) {
        self.executor = executor
    }

    nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    func hop() -> Int {
        calls += 1
        return calls
    }
}

/// The runtime's default actor: the baseline.
actor PlainCounter: HopTarget {
    private var calls = 0

    func hop() -> Int {
        calls += 1
        return calls
    }
}

enum AsyncWorkloads {
    /// ns per call of `n` awaited calls to `target`: from a pool task, or from a task preferring
    /// `executor` (nonisolated code then runs there, as the actor does).
    static func actorHop(to target: some HopTarget, _ n: Int, preferring executor: (any TaskExecutor)?) -> Double {
        let body: @Sendable () async -> Int64 = {
            let start = monotonicNanoseconds()
            for _ in 0..<n { _ = await target.hop() }
            return monotonicNanoseconds() - start
        }
        let task = executor.map { Task(executorPreference: $0, operation: body) } ?? Task.detached(operation: body)
        return Double(blockingValue(of: task)) / Double(n)
    }

    /// `n` pool tasks each sleeping 30 s, all cancelled once all are sleeping: ns per pair (the
    /// starting and the cancelling, not the pause between) and heap bytes still held once `settle`
    /// (a loop iteration) passed.
    static func sleepCancel(
        _ n: Int,
        settle: () -> Void,
        _ sleep: @escaping @Sendable () async throws -> Void
    ) -> (nsPerPair: Double, heldBytes: Int, woke: Int) {
        let started = Countdown(n)
        let ended = Countdown(n)
        let woke = Tally()
        let baseline = floor_heap_bytes_in_use()
        let start = monotonicNanoseconds()
        var tasks: [Task<Void, Never>] = []
        tasks.reserveCapacity(n)
        for _ in 0..<n {
            tasks.append(
                Task.detached {
                    started.tick()
                    do {
                        try await sleep()
                        woke.add()
                    } catch {}
                    ended.tick()
                }
            )
        }
        started.wait()
        let startPhase = started.finishedAt.load(ordering: .acquiring) - start
        // The last tasks counted as started may still be on their way into the sleep.
        Thread.sleep(forTimeInterval: 0.05)
        let cancelStart = monotonicNanoseconds()
        for task in tasks { task.cancel() }
        ended.wait()
        let cancelPhase = ended.finishedAt.load(ordering: .acquiring) - cancelStart
        tasks.removeAll()
        settle()
        return (
            Double(startPhase + cancelPhase) / Double(n), floor_heap_bytes_in_use() - baseline, woke.count
        )
    }

    /// `n` calls in sequence from one pool task: ns per call, heap bytes held once `settle` passed,
    /// and how many returned the operation's value.
    static func timeoutCalls(
        _ n: Int,
        settle: () -> Void,
        _ call: @escaping @Sendable () async throws -> Int
    ) -> (nsPerCall: Double, heldBytes: Int, returned: Int) {
        let baseline = floor_heap_bytes_in_use()
        let (elapsed, returned) = blockingValue(
            of: Task.detached { () -> (Int64, Int) in
                let start = monotonicNanoseconds()
                var returned = 0
                for _ in 0..<n {
                    if (try? await call()) == 1 { returned += 1 }
                }
                return (monotonicNanoseconds() - start, returned)
            }
        )
        settle()
        return (Double(elapsed) / Double(n), floor_heap_bytes_in_use() - baseline, returned)
    }

    /// The hand-written timeout: the operation and a sleep-then-throw in a task group; the first
    /// to finish wins and the other is cancelled.
    static func raceTaskSleep<T: Sendable>(
        _ timeout: Duration,
        _ operation: @escaping @Sendable () async throws -> T
    ) async throws -> T {
        try await withThrowingTaskGroup(of: T.self) { group in
            group.addTask { try await operation() }
            group.addTask {
                try await Task.sleep(for: timeout)
                throw TimeoutError(timeout: timeout)
            }
            let first = try await group.next()!
            group.cancelAll()
            return first
        }
    }
}
