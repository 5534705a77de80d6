import Scheduling
@_spi(Workloads) import SchedulingWorkloads

/// A system that runs submitted work at once on the calling thread and keeps its timers without
/// firing them, recording what the workload scheduled and cancelled: the workloads' bookkeeping,
/// checked without a clock.
final class RecordingSystem: WorkloadSystem {
    struct State {
        var actions: [@Sendable () -> Void] = []
        var cancelled: [Int] = []
    }

    let state = LockedValue(State())
    /// Whether ``confirmsCancelled(_:)`` confirms a cancelled timer (a system that does not tells
    /// of none).
    let confirmsCancellations: Bool
    /// How often the action of the timer with each index runs as it is scheduled (none after the
    /// last index): a system that fires timers at once, some more than once, some never.
    let firings: [Int]

    init(confirmsCancellations: Bool = true, firings: [Int] = []) {
        self.confirmsCancellations = confirmsCancellations
        self.firings = firings
    }

    func execute(_ body: @escaping @Sendable () -> Void) { body() }

    func schedule(afterNanoseconds delay: Int64, _ body: @escaping @Sendable () -> Void) -> Int {
        let index = state.withLock { state in
            state.actions.append(body)
            return state.actions.count - 1
        }
        for _ in 0..<(index < firings.count ? firings[index] : 0) { body() }
        return index
    }

    func scheduleRepeating(everyNanoseconds interval: Int64, _ body: @escaping @Sendable () -> Void) -> Int {
        schedule(afterNanoseconds: interval, body)
    }

    func cancel(_ timer: Int) { state.withLock { $0.cancelled.append(timer) } }

    /// Whether `timer` was cancelled, unless the system confirms nothing.
    func confirmsCancelled(_ timer: Int) -> Bool? {
        confirmsCancellations && state.withLock { $0.cancelled.contains(timer) }
    }

    func shutdown() {}

    /// Runs every timer's action, as if each had fired.
    func fireAll() {
        for action in state.withLock({ $0.actions }) { action() }
    }

    var scheduled: Int { state.withLock { $0.actions.count } }
    var cancelled: [Int] { state.withLock { $0.cancelled } }
}

/// Draws a fixed sequence, so a test knows which slot each random operation picks.
struct ScriptedGenerator: RandomNumberGenerator {
    var values: [UInt64]
    /// How many values were drawn.
    var drawn = 0

    mutating func next() -> UInt64 {
        defer { drawn += 1 }
        return values[drawn % values.count]
    }
}
