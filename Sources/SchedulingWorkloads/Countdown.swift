import Dispatch
import Scheduling
import Synchronization

/// A countdown the last action signals, with the time it did.
@_spi(Workloads)
public final class Countdown: Sendable {
    @usableFromInline let remaining: Atomic<Int>
    @usableFromInline let done = DispatchSemaphore(value: 0)
    /// `Measure.now()` when the count reached zero.
    public let finishedAt = Atomic<Int64>(0)

    /// A countdown of `count` ticks.
    public init(_ count: Int) {
        remaining = Atomic(count)
    }

    /// Inlinable: it runs inside the actions being measured.
    @inlinable @inline(__always)
    public func tick() {
        if remaining.subtract(1, ordering: .acquiringAndReleasing).newValue == 0 {
            finishedAt.store(Measure.now(), ordering: .releasing)
            done.signal()
        }
    }

    /// Waits for the last tick; false if `timeout` passed first.
    public func wait(timeout: Duration) -> Bool {
        done.wait(timeout: .now() + .nanoseconds(Int(Nanoseconds.of(timeout)))) == .success
    }

    /// Ticks still to come.
    public var left: Int { remaining.load(ordering: .acquiring) }
}
