import CLibUVFloor
import Dispatch
import Glibc
import Scheduling
import Synchronization

/// Monotonic nanoseconds (the clock every system's timers use).
func monotonicNanoseconds() -> Int64 {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec)
}

/// A value behind a mutex (the library's lock box is package-internal).
final class LockedValue<Value: Sendable>: Sendable {
    private let mutex: Mutex<Value>
    init(_ value: Value) { mutex = Mutex(value) }
    func withLock<Result>(_ body: (inout Value) -> Result) -> Result { mutex.withLock { body(&$0) } }
}

/// A countdown the last action signals, with the time it did.
final class Countdown: Sendable {
    private let remaining: Atomic<Int>
    private let done = DispatchSemaphore(value: 0)
    let finishedAt = Atomic<Int64>(0)

    init(_ count: Int) { remaining = Atomic(count) }

    func tick() {
        if remaining.subtract(1, ordering: .acquiringAndReleasing).newValue == 0 {
            finishedAt.store(monotonicNanoseconds(), ordering: .releasing)
            done.signal()
        }
    }

    func wait() { done.wait() }
}

/// Values written by index from the system's loop thread, read after it is done.
final class Slots: Sendable {
    private let values: LockedValue<[Int64]>
    init(count: Int) { values = LockedValue(Array(repeating: 0, count: count)) }
    func set(_ index: Int, _ value: Int64) { values.withLock { $0[index] = value } }
    var all: [Int64] { values.withLock { $0 } }
}

/// Runs `body` on the system's loop (or queue) and waits for it.
func onLoop(_ system: any BenchSystem, _ body: @escaping @Sendable () -> Void) {
    let done = DispatchSemaphore(value: 0)
    system.execute {
        body()
        done.signal()
    }
    done.wait()
}

/// A cancellable handed across threads.
private final class CancellableBox: @unchecked Sendable {
    // Written once on the loop before any tick can read it, then only read.
    var value: (any Cancellable)?
}

enum Workloads {
    static func now() -> Int64 { monotonicNanoseconds() }

    static func submitCross(_ system: any BenchSystem, _ n: Int) -> Double {
        let countdown = Countdown(n)
        let start = now()
        for _ in 0..<n { system.execute { countdown.tick() } }
        countdown.wait()
        return Double(countdown.finishedAt.load(ordering: .acquiring) - start) / Double(n)
    }

    static func submitOnLoop(_ system: any BenchSystem, _ n: Int) -> Double {
        let countdown = Countdown(n)
        let start = Atomic<Int64>(0)
        system.execute {
            start.store(now(), ordering: .relaxed)
            for _ in 0..<n { system.execute { countdown.tick() } }
        }
        countdown.wait()
        return Double(countdown.finishedAt.load(ordering: .acquiring) - start.load(ordering: .relaxed)) / Double(n)
    }

    static func timersFire(
        _ system: any BenchSystem,
        _ n: Int
    ) -> (nsPerSchedule: Double, wallSeconds: Double, early: Int) {
        var generator = SystemRandomNumberGenerator()
        let delays = (0..<n).map { _ in Int64.random(in: 0..<1_000_000_000, using: &generator) }
        let countdown = Countdown(n)
        let early = Atomic<Int>(0)
        let timing = LockedValue<(Int64, Int64)>((0, 0))
        onLoop(system) {
            let start = now()
            for delay in delays {
                let due = start + delay
                _ = system.schedule(afterNanoseconds: delay) {
                    if now() < due { early.add(1, ordering: .relaxed) }
                    countdown.tick()
                }
            }
            timing.withLock { $0 = (start, now()) }
        }
        countdown.wait()
        let (start, scheduled) = timing.withLock { $0 }
        return (
            Double(scheduled - start) / Double(n),
            Double(countdown.finishedAt.load(ordering: .acquiring) - start) / 1e9,
            early.load(ordering: .relaxed)
        )
    }

    static func timersCancel(_ system: any BenchSystem, _ n: Int, random: Bool) -> (nsPerPair: Double, heldBytes: Int) {
        var generator = SystemRandomNumberGenerator()
        let order = random ? Array(0..<n).shuffled(using: &generator) : Array(0..<n)
        let baseline = floor_heap_bytes_in_use()
        let perPair = LockedValue(0.0)
        onLoop(system) {
            var scheduled: [any Cancellable] = []
            scheduled.reserveCapacity(n)
            let start = now()
            for _ in 0..<n { scheduled.append(system.schedule(afterNanoseconds: 30_000_000_000) {}) }
            for index in order { scheduled[index].cancel() }
            let elapsed = now() - start
            perPair.withLock { $0 = Double(elapsed) / Double(n) }
        }
        onLoop(system) {}
        return (perPair.withLock { $0 }, floor_heap_bytes_in_use() - baseline)
    }

    static func periodicDrift(_ system: any BenchSystem, ticks: Int) -> (drift: Double, p50: Double, p99: Double) {
        let interval: Int64 = 10_000_000
        let times = Slots(count: ticks)
        let count = Atomic<Int>(0)
        let countdown = Countdown(1)
        let box = CancellableBox()
        let origin = LockedValue<Int64>(0)
        onLoop(system) {
            origin.withLock { $0 = now() + interval }
            box.value = system.repeating(everyNanoseconds: interval) {
                let index = count.add(1, ordering: .relaxed).newValue - 1
                guard index < ticks else { return }
                times.set(index, now())
                if index == ticks - 1 {
                    box.value?.cancel()
                    countdown.tick()
                }
            }
        }
        countdown.wait()
        let start = origin.withLock { $0 }
        let lateness = times.all.enumerated().map { Double($0.element - (start + Int64($0.offset) * interval)) }
        let sorted = lateness.sorted()
        return (lateness.last ?? 0, sorted[sorted.count / 2], sorted[Int(Double(sorted.count) * 0.99)])
    }

    static func lateness(_ system: any BenchSystem, _ n: Int) -> (p50: Double, p99: Double, early: Int) {
        var generator = SystemRandomNumberGenerator()
        let delays = (0..<n).map { _ in Int64.random(in: 0..<2_000_000_000, using: &generator) }
        let due = Slots(count: n)
        let fired = Slots(count: n)
        let countdown = Countdown(n)
        let burstEnd = Atomic<Int64>(0)
        onLoop(system) {
            for (index, delay) in delays.enumerated() {
                due.set(index, now() + delay)
                _ = system.schedule(afterNanoseconds: delay) {
                    fired.set(index, now())
                    countdown.tick()
                }
            }
            burstEnd.store(now(), ordering: .relaxed)
        }
        countdown.wait()
        let end = burstEnd.load(ordering: .relaxed)
        let dues = due.all
        let fires = fired.all
        var early = 0
        var afterBurst: [Int64] = []
        for index in 0..<n {
            if fires[index] < dues[index] { early += 1 }
            if dues[index] > end { afterBurst.append(fires[index] - dues[index]) }
        }
        afterBurst.sort()
        guard !afterBurst.isEmpty else { return (0, 0, early) }
        return (
            Double(afterBurst[afterBurst.count / 2]), Double(afterBurst[Int(Double(afterBurst.count) * 0.99)]), early
        )
    }

    static func pendingMemory(_ system: any BenchSystem, _ n: Int) -> Double {
        var scheduled: [any Cancellable] = []
        scheduled.reserveCapacity(n)
        onLoop(system) {}
        let baseline = floor_heap_bytes_in_use()
        for _ in 0..<n { scheduled.append(system.schedule(afterNanoseconds: 3_600_000_000_000) {}) }
        onLoop(system) {}
        let perTimer = Double(floor_heap_bytes_in_use() - baseline) / Double(n)
        for item in scheduled { item.cancel() }
        onLoop(system) {}
        return perTimer
    }
}
