import Scheduling
import Synchronization

/// One scheduled action of a LoopScheduler: the queue entry, the heap entry and the returned
/// disposable in one object (so one allocation besides the closure's context).
///
/// Thread rules: `state` is atomic; `action` belongs to whoever wins a transition out of
/// `pending` (see `ActionLifecycle`); `deadline`, `sequence` and `heapIndex` are loop-confined
/// once the entry reached the loop (the scheduling thread writes them before publishing it).
// Safe as described above: the atomic state machine decides every cross-thread access.
class LoopEntry: IndexedHeapEntry, Disposable, @unchecked Sendable {
    enum Kind: UInt8 {
        case task
        case timer
        case wallTimer
    }

    let core: LoopCore
    var deadline: Int64
    var sequence: UInt64 = 0
    var heapIndex = -1
    final var action: (@Sendable () -> Void)?
    let state = Atomic<UInt8>(ActionLifecycle.pending)
    final var kind: Kind

    init(core: LoopCore, kind: Kind, deadline: Int64, action: (@Sendable () -> Void)?) {
        self.core = core
        self.kind = kind
        self.deadline = deadline
        self.action = action
    }

    final var isDisposed: Bool { ActionLifecycle.isDisposed(state) }

    final func dispose() {
        if ActionLifecycle.dispose(state) == .wasPending {
            releaseAction()
            core.entryDisposed(self)
        }
    }

    /// Drops the closure(s). Called by whoever owns them under the state machine.
    func releaseAction() {
        action = nil
    }

    /// How late a tick may start, for coalescing wake-ups. One-shot timers have none.
    var leeway: Int64 { 0 }
}

/// A periodic timer: ticks on the grid `origin + k·interval`, skipping missed grid points and
/// telling the next tick how many it skipped.
final class PeriodicLoopEntry: LoopEntry, @unchecked Sendable {
    let interval: Int64
    let tickLeeway: Int64
    /// The grid's origin on the monotonic clock; unknown (0) while the first tick is a wall-clock one.
    var origin: Int64
    var tickIndex: Int64 = 0
    var missedTicks = 0
    var tick: (@Sendable (_ missedTicks: Int) -> Void)?

    init(
        core: LoopCore, kind: Kind, deadline: Int64, interval: Int64, leeway: Int64,
        tick: @escaping @Sendable (Int) -> Void
    ) {
        self.interval = interval
        self.tickLeeway = leeway
        self.origin = deadline
        self.tick = tick
        super.init(core: core, kind: kind, deadline: deadline, action: nil)
    }

    override func releaseAction() {
        tick = nil
    }

    override var leeway: Int64 { tickLeeway }

    /// Moves `deadline` to the first grid point after `now`, counting the grid points skipped.
    func advance(after now: Int64) {
        var next = tickIndex &+ 1
        let nextDeadline = Nanoseconds.adding(origin, Nanoseconds.multiplying(next, interval))
        if nextDeadline <= now {
            next = Nanoseconds.subtracting(now, origin) / interval + 1
        }
        missedTicks = Int(clamping: next - tickIndex - 1)
        tickIndex = next
        deadline = Nanoseconds.adding(origin, Nanoseconds.multiplying(next, interval))
    }
}
