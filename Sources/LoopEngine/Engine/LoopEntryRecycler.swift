@_spi(SchedulerEngine) import Scheduling

/// Task and timer entries whose run ended while only the loop held them (the caller had dropped
/// its disposable, as most do), kept for the next `schedule` on the loop thread instead of a
/// `malloc` and a `free` per action; and the demand that decides how much a quiet loop keeps.
package final class LoopEntryRecycler {
    // Loop-confined, never across user code (see LoopConfined).
    @exclusivity(unchecked) private var state: LoopConfined<Spares>

    init(loopThread: LoopThreadIdentity) {
        state = LoopConfined(Spares(), loopThread: loopThread)
    }

    package struct Spares {
        var tasks: [LoopWork] = []
        var timers: [LoopTimer] = []
        /// The most entries one round handled (remote items, local items or fired timers) since
        /// the last prepare: the demand the buffers and spare lists serve.
        var busiestRound = 0
    }

    /// The most spare entries of each kind kept for reuse (64 KiB each).
    static let limit = 1024
    /// Buffers and spare lists with room for at most this many entries are kept even at rest (512
    /// bytes of buffer, 4 KiB of entries): giving them back would only cost reallocations.
    static let keptAtRest = 64

    /// On the loop thread: a task entry for `action`, a spare one when there is one.
    @inline(__always)
    func task(_ action: __owned @escaping @Sendable () -> Void) -> LoopWork {
        if let spare = state.value.tasks.popLast() {
            spare.reuse(action: consume action)
            return spare
        }
        return LoopWork(action: consume action)
    }

    /// On the loop thread: a one-shot timer entry, a spare one when there is one.
    @inline(__always)
    func timer(_ core: LoopCore, deadline: Int64, isWall: Bool, action: __owned @escaping @Sendable () -> Void) -> LoopTimer {
        if let spare = state.value.timers.popLast() {
            spare.deadline = deadline
            spare.isWall = isWall
            spare.reuse(action: consume action)
            return spare
        }
        return LoopTimer(core: core, deadline: deadline, isWall: isWall, action: consume action)
    }

    @inline(__always)
    func noteRound(_ handled: Int) {
        if handled > state.value.busiestRound { state.value.busiestRound = handled }
    }

    /// Empties a processed queue buffer, keeping the task entries only the loop still holds.
    @inline(__always)
    func recycle(_ items: inout [LoopItem]) {
        while let item = items.popLast() {
            guard case .task(var entry) = consume item,
                state.value.tasks.count < Self.limit,
                Self.isOnlyReference(&entry)
            else { continue }
            // Its run ended (or it was disposed): nobody else can see it any more.
            entry.state.store(ActionLifecycle.pending, ordering: .relaxed)
            state.value.tasks.append(entry)
        }
        if items.capacity > 65_536 { items = [] }
    }

    /// Keeps a fired one-shot closure timer that only the loop still holds. Only a plain
    /// `LoopTimer`: a subclass (a handler timer, a periodic one, a wake job) reused as a closure
    /// timer would keep its own leeway and its own `releaseAction`, which leaves the closure in place.
    @inline(__always)
    func recycle(_ timer: inout LoopTimer) {
        guard ObjectIdentifier(type(of: timer)) == ObjectIdentifier(LoopTimer.self),
            state.value.timers.count < Self.limit, Self.isOnlyReference(&timer)
        else { return }
        timer.state.store(ActionLifecycle.pending, ordering: .relaxed)
        state.value.timers.append(timer)
    }

    /// Whether `entry` is referenced by nothing but `entry`: no other strong reference, and no weak
    /// or unowned one either (the runtime counts 1 of each for a live object) — a user's `weak var`
    /// disposable must become nil, never come back disposing a stranger's action after reuse.
    @inline(__always)
    static func isOnlyReference<Entry: LoopWork>(_ entry: inout Entry) -> Bool {
        isKnownUniquelyReferenced(&entry) && _getWeakRetainCount(entry) == 1 && _getUnownedRetainCount(entry) == 1
    }

    /// What a quiet loop keeps of a buffer or spare list: far beyond this iteration's busiest round
    /// (more than four times it, and more than ``keptAtRest``) goes back to the allocator.
    var keep: Int { max(Self.keptAtRest, 4 * state.value.busiestRound) }

    /// Whether the iteration handled any work: one that did none (the wake-up right after a burst
    /// its batch served, or a host's own I/O on an adopted loop) says nothing about demand.
    var didWork: Bool { state.value.busiestRound > 0 }

    /// Once the loop is quiet and this iteration did some work: spare entries beyond ``keep`` go,
    /// and a spare list's buffer only when it has room for more than twice that. Entries of work
    /// scheduled from other threads are kept as spares that only the loop's own schedules reuse, so
    /// under cross-thread work the lists refill; a buffer dropped each time it passed ``keep`` grew
    /// again from nothing (0.05–0.07 allocations per cross-thread task or timer, the allocation
    /// guard's probes), one trimmed to ``keep`` does not.
    func giveBackMemory() {
        let keep = self.keep
        guard didWork else { return }
        Self.trim(&state.value.tasks, to: keep)
        Self.trim(&state.value.timers, to: keep)
    }

    private static func trim<Entry>(_ spares: inout [Entry], to keep: Int) {
        if spares.capacity > 2 * keep {
            spares = []
        } else if spares.count > keep {
            spares.removeLast(spares.count - keep)
        }
    }

    /// A new iteration: its busiest round starts at zero.
    func startIteration() {
        state.value.busiestRound = 0
    }

    /// After the last close callback: spare timers point back at the core; dropping them breaks
    /// that cycle.
    func dropAll() {
        state.value = Spares()
    }

    /// Spare entries held: for tests.
    var spareCounts: (tasks: Int, timers: Int) { (state.value.tasks.count, state.value.timers.count) }
    var spareCapacities: (tasks: Int, timers: Int) { (state.value.tasks.capacity, state.value.timers.capacity) }
    var spareTaskIdentities: [ObjectIdentifier] { state.value.tasks.map(ObjectIdentifier.init) }
}
