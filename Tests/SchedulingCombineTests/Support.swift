#if OpenCombine
import Foundation
import LoopSchedulingTestSupport
import OpenCombine
import Scheduling
import SchedulingCombine

/// Moves a non-Sendable Combine object (a subject, a cancellable) into scheduled actions.
// @unchecked: OpenCombine's subjects and subscriptions lock internally, and the tests touch each
// one from one scheduler at a time (the TestScheduler's actions run on the test's own thread).
struct Unchecked<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}

/// What a subscriber saw, with the time it saw it.
final class Recorder<Value: Sendable>: Sendable {
    private let events = LockedValue<[(at: Int64, value: Value)]>([])
    func append(_ value: Value, at nanoseconds: Int64) {
        events.withLock { $0.append((nanoseconds, value)) }
    }

    var values: [Value] { events.withLock { $0.map(\.value) } }
    var times: [Int64] { events.withLock { $0.map(\.at) } }
    var count: Int { events.withLock { $0.count } }

    /// Waits until `count` events were recorded, or `timeout` passed, without holding a thread.
    func wait(for count: Int, timeout: Duration = .seconds(20)) async -> Bool {
        await eventually(timeout: timeout) { self.count >= count }
    }
}

/// A subscriber's completion, seen once.
enum Outcome: Sendable, Equatable {
    case finished
    case failed(String)
}

/// Nanoseconds of seconds, for readable expectations.
func ns(_ seconds: Double) -> Int64 { Int64((seconds * 1e9).rounded()) }
#endif
