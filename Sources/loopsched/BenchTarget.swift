#if CommandLineTool
import Dispatch
import LoopScheduling
import Scheduling
import Synchronization

/// The schedulers `loopsched` compares.
enum BenchTarget: String, CaseIterable, Codable {
    case loop
    case queue

    var displayName: String {
        switch self {
        case .loop: "LoopScheduler"
        case .queue: "QueueScheduler"
        }
    }

    /// A fresh scheduler of this kind; `driver` wakes a LoopScheduler's timers.
    func make(driver: TimerDriverKind) throws -> RunningTarget {
        switch self {
        case .loop:
            let loop = try LoopScheduler(name: "bench-loop", clock: SystemClock(), driver: driver)
            return RunningTarget(scheduler: loop) { loop.shutdown() }
        case .queue:
            return RunningTarget(scheduler: QueueScheduler(name: "loopsched", priority: .high)) {}
        }
    }
}

/// A scheduler under measurement.
struct RunningTarget: Sendable {
    let scheduler: any DateScheduler
    let shutdown: @Sendable () -> Void

    /// Runs `body` as an action of the scheduler and waits for it (so the work it does is "on" the
    /// scheduler: on the loop thread, or on the queue).
    func onScheduler(_ body: @escaping @Sendable () -> Void) {
        let done = DispatchSemaphore(value: 0)
        scheduler.schedule {
            body()
            done.signal()
        }
        done.wait()
    }

    /// Waits until everything the scheduler had queued before this call was processed.
    func roundTrip() {
        onScheduler {}
    }
}

/// A countdown the last action signals.
final class Countdown: Sendable {
    private let remaining: Atomic<Int>
    private let done = DispatchSemaphore(value: 0)
    let finishedAt = Atomic<Int64>(0)

    init(_ count: Int) {
        remaining = Atomic(count)
    }

    @inline(__always)
    func tick() {
        if remaining.subtract(1, ordering: .acquiringAndReleasing).newValue == 0 {
            finishedAt.store(Measure.now(), ordering: .releasing)
            done.signal()
        }
    }

    /// Waits for the last tick; false if `timeout` passed first.
    func wait(timeout: Duration) -> Bool {
        done.wait(timeout: .now() + .nanoseconds(Int(Nanoseconds.of(timeout)))) == .success
    }

    var left: Int { remaining.load(ordering: .acquiring) }
}

/// A count that tasks on any thread add to.
final class Tally: Sendable {
    private let value = Atomic<Int>(0)

    func add() { value.add(1, ordering: .relaxed) }
    var count: Int { value.load(ordering: .relaxed) }
}

/// Per-action values written by index from the scheduler's thread(s).
final class Slots: Sendable {
    private let values: LockedValue<[Int64]>

    init(count: Int) {
        values = LockedValue(Array(repeating: .min, count: count))
    }

    func set(_ index: Int, _ value: Int64) { values.withLock { $0[index] = value } }
    var all: [Int64] { values.withLock { $0 } }
}
#endif
