#if CommandLineTool
import Foundation
@_spi(SchedulerEngine) import Scheduling
@_spi(Workloads) import SchedulingWorkloads

/// A timer "scheduler" with no store: scheduling reads the clock and makes an entry of a loop
/// timer's size, cancelling disposes it, and nothing else happens. The timer workloads run on it
/// measure what they cost by themselves (their ring of `any Disposable` handles, the first touch
/// of each entry, the allocator), which no scheduler can go below: `loopsched bound`.
///
/// Runs everything on the calling thread: `execute` calls its body at once.
struct NullStoreSystem: WorkloadSystem {
    /// A `LoopTimer`'s 56 bytes (one 64-byte allocator chunk): the closure-owning entry with a
    /// deadline and an owner reference, never filed anywhere.
    // Its fields are written before it is returned and never again; `ScheduledAction`'s state
    // machine decides the closure's owner.
    final class Entry: ScheduledAction, @unchecked Sendable {
        let deadline: Int64
        let owner: AnyObject?

        init(deadline: Int64, action: __owned @escaping @Sendable () -> Void) {
            self.deadline = deadline
            owner = nil
            super.init(action: consume action)
        }
    }

    func execute(_ body: __owned @escaping @Sendable () -> Void) {
        body()
    }

    func schedule(afterNanoseconds delay: Int64, _ body: __owned @escaping @Sendable () -> Void) -> any Disposable {
        Entry(deadline: Measure.now() &+ delay, action: consume body)
    }

    func scheduleRepeating(
        everyNanoseconds interval: Int64,
        _ body: __owned @escaping @Sendable () -> Void
    ) -> any Disposable {
        Entry(deadline: Measure.now() &+ interval, action: consume body)
    }

    func cancel(_ timer: any Disposable) {
        timer.dispose()
    }

    func shutdown() {}

    /// A re-armable timer with no store: a re-arm reads the clock and writes the entry's deadline,
    /// what any store's re-arm does at the least.
    // Used on one thread only (`loopsched bound`).
    final class RearmableEntry: ScheduledAction, RearmableTimer, @unchecked Sendable {
        var deadline: Int64

        init(deadline: Int64, action: __owned @escaping @Sendable () -> Void) {
            self.deadline = deadline
            super.init(action: consume action)
        }

        func rearm(after delay: Duration) -> Bool {
            guard !isDisposed else { return false }
            deadline = Measure.now() &+ Nanoseconds.of(delay)
            return true
        }

        func rearm(at date: Date) -> Bool {
            guard !isDisposed else { return false }
            deadline = Nanoseconds.sinceEpoch(date)
            return true
        }
    }
}
#endif
