import Foundation
import LoopSchedulingTestSupport
import Scheduling
import Synchronization
import Testing

@testable import LoopEngine
@testable import LoopScheduling

/// Clocks the tests can step: real time plus an offset, or a frozen monotonic reading.
final class SteppableClock: ClockSource {
    private let wallOffset = Atomic<Int64>(0)
    private let frozenMonotonic = Atomic<Int64>(0)

    func monotonicNow() -> Int64 {
        let frozen = frozenMonotonic.load(ordering: .acquiring)
        return frozen != 0 ? frozen : Nanoseconds.monotonicNow()
    }

    func wallNow() -> Int64 { Nanoseconds.wallNow() + wallOffset.load(ordering: .acquiring) }

    func stepWall(by nanoseconds: Int64) { wallOffset.add(nanoseconds, ordering: .acquiringAndReleasing) }
    func freezeMonotonic(at value: Int64) { frozenMonotonic.store(value, ordering: .releasing) }
    func unfreeze() { frozenMonotonic.store(0, ordering: .releasing) }
}

/// Runs `body` on the loop and suspends until it returned its result.
func onLoop<Result: Sendable>(_ loop: LoopScheduler, _ body: @escaping @Sendable () -> Result) async -> Result {
    await withCheckedContinuation { continuation in
        loop.schedule { continuation.resume(returning: body()) }
    }
}

/// Spins for `nanoseconds`: the loop thread must be busy, not asleep, for these tests.
func busyWait(_ nanoseconds: Int64) {
    let until = Nanoseconds.monotonicNow() + nanoseconds
    while Nanoseconds.monotonicNow() < until {}
}

final class Tracked: Sendable {}

final class WeakTracked: Sendable {
    private struct Reference { weak var object: Tracked? }
    private let reference: LockedValue<Reference>
    init(_ object: Tracked) { reference = LockedValue(Reference(object: object)) }
    var isNil: Bool { reference.withLock { $0.object == nil } }
}

extension TimerDriverKind: CustomTestStringConvertible {
    /// The driver's name in test reports.
    public var testDescription: String { self == .timerfd ? "timerfd" : "uv_timer" }
    static let all: [TimerDriverKind] = [.timerfd, .uvTimer]
}

@Suite("Test support")
struct SupportTests {
    @Test("SteppableClock steps the wall clock and freezes the monotonic one")
    func steppableClock() {
        let clock = SteppableClock()
        let wall = clock.wallNow()
        clock.stepWall(by: 3_600_000_000_000)
        #expect(clock.wallNow() - wall >= 3_600_000_000_000)
        clock.freezeMonotonic(at: 42)
        #expect(clock.monotonicNow() == 42)
        clock.unfreeze()
        #expect(clock.monotonicNow() > 42)
    }
}
