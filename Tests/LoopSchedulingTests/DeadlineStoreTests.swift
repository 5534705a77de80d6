import Scheduling
import Testing

#if canImport(Glibc)
import Glibc
#endif

@testable import LoopEngine
@testable import LoopScheduling

/// The timer store without a loop: ordering, cancellation, waking, periodic re-arming and memory.
@Suite("Loop timer store")
struct DeadlineStoreTests {
    func timer(_ deadline: Int64, wall: Bool = false) -> LoopTimer {
        LoopTimer(core: nil, deadline: deadline, isWall: wall, action: {})
    }

    func periodic(_ deadline: Int64, interval: Int64, leeway: Int64 = 0, wall: Bool = false) -> PeriodicLoopTimer {
        PeriodicLoopTimer(core: nil, deadline: deadline, isWall: wall, interval: interval, leeway: leeway) { _ in }
    }

    /// Pops everything due at `now` inserted before the pass.
    func drain(_ store: inout DeadlineStore, at now: Int64) -> [LoopTimer] {
        let limit = store.nextSequence
        var popped: [LoopTimer] = []
        while let due = store.popDue(monotonicNow: now, limit: limit) { popped.append(due.timer) }
        return popped
    }

    @Test("Timers pop in (deadline, scheduling order), only when due, with their lateness")
    func order() {
        var store = DeadlineStore()
        let late = timer(300)
        let firstAt200 = timer(200)
        let secondAt200 = timer(200)
        let early = timer(100)
        for entry in [late, firstAt200, secondAt200, early] { store.insert(entry) }
        do {
            let value = store.popDue(monotonicNow: 99, limit: store.nextSequence)
            #expect(value == nil)
        }
        let first = store.popDue(monotonicNow: 150, limit: store.nextSequence)
        #expect(first?.timer === early && first?.lateness == 50)
        let popped = drain(&store, at: 250)
        #expect(popped.count == 2 && popped[0] === firstAt200 && popped[1] === secondAt200)
        #expect(store.count == 1)
        _ = store.removeAll()
    }

    @Test("A timer inserted during a pass waits for the next one (no starvation by re-arming)")
    func passLimit() {
        var store = DeadlineStore()
        store.insert(timer(0))
        let limit = store.nextSequence
        do {
            let value = store.popDue(monotonicNow: 10, limit: limit)
            #expect(value != nil)
        }
        store.insert(timer(0))  // scheduled by the timer that just ran
        do {
            let value = store.popDue(monotonicNow: 10, limit: limit)
            #expect(value == nil)
        }
        do {
            let value = store.popDue(monotonicNow: 10, limit: store.nextSequence)
            #expect(value != nil)
        }
    }

    @Test("Removing frees the slot at once; removing twice or a fired timer does nothing")
    func removal() {
        var store = DeadlineStore()
        let entries = (0..<100).map { timer(Int64($0)) }
        for entry in entries { store.insert(entry) }
        for entry in entries where entry.deadline % 2 == 0 {
            let removed = store.remove(entry)
            #expect(removed)
        }
        do {
            let value = store.remove(entries[0])
            #expect(!value)
        }
        #expect(store.count == 50)
        let popped = drain(&store, at: .max - 1)
        #expect(popped.map(\.deadline) == Array(stride(from: 1, to: 100, by: 2)))
        do {
            let value = store.remove(entries[1])
            #expect(!value)
        }
    }

    @Test("A lone timer wakes the loop at its deadline; its leeway never postpones it")
    func leewayDoesNotPostpone() {
        var store = DeadlineStore()
        store.insert(periodic(1_000, interval: 10_000_000, leeway: 50_000_000))
        do {
            let value = store.nextWake(monotonicNow: 0, wallNow: 0) == .arm(in: 1_000)
            #expect(value)
        }
        // A saturated leeway still wakes at the deadline.
        var saturated = DeadlineStore()
        saturated.insert(periodic(1_000, interval: 10, leeway: .max))
        do {
            let value = saturated.nextWake(monotonicNow: 0, wallNow: 0) == .arm(in: 1_000)
            #expect(value)
        }
        _ = store.removeAll()
        _ = saturated.removeAll()
    }

    @Test("Leeway coalesces with the next timer's deadline or the armed wake-up inside it, and with nothing else")
    func leewayCoalesces() {
        var store = DeadlineStore()
        store.insert(periodic(1_000, interval: 1_000_000, leeway: 500))
        store.insert(timer(1_300))  // within the allowance: one wake-up for both
        do {
            let value = store.nextWake(monotonicNow: 0, wallNow: 0) == .arm(in: 1_300)
            #expect(value)
        }
        var apart = DeadlineStore()
        apart.insert(periodic(1_000, interval: 1_000_000, leeway: 500))
        apart.insert(timer(2_000))  // outside it: the first timer wakes on time
        do {
            let value = apart.nextWake(monotonicNow: 0, wallNow: 0) == .arm(in: 1_000)
            #expect(value)
        }
        // Armed at 1_000: a new earlier timer re-arms; the same state again keeps the arming.
        do {
            let value = apart.nextWake(monotonicNow: 0, wallNow: 0)
            #expect(value == .keep)
        }
        apart.insert(timer(500))
        do {
            let value = apart.nextWake(monotonicNow: 0, wallNow: 0) == .arm(in: 500)
            #expect(value)
        }
        _ = store.removeAll()
        _ = apart.removeAll()
    }

    @Test("Due timers ask to run now; saturated deadlines arm nothing; wall timers are re-checked each second")
    func wakeKinds() {
        var store = DeadlineStore()
        store.insert(timer(100))
        do {
            let value = store.nextWake(monotonicNow: 100, wallNow: 0)
            #expect(value == .runNow)
        }
        var never = DeadlineStore()
        never.insert(timer(Nanoseconds.never))
        never.insert(timer(Nanoseconds.never, wall: true))
        do {
            let value = never.nextWake(monotonicNow: 0, wallNow: 0)
            #expect(value == .keep)
        }
        var wall = DeadlineStore()
        wall.insert(timer(1_000_000 + 3_600_000_000_000, wall: true))  // an hour of wall time away
        do {
            let value = wall.nextWake(monotonicNow: 5, wallNow: 1_000_000) == .arm(in: DeadlineStore.wallRecheck)
            #expect(value)
        }
        wall.wallClockChanged()  // the clock was stepped forward by the hour
        do {
            let value = wall.nextWake(monotonicNow: 5, wallNow: 1_000_000 + 3_600_000_000_000)
            #expect(value == .runNow)
        }
        _ = store.removeAll()
        _ = never.removeAll()
        _ = wall.removeAll()
    }

    @Test("A periodic timer goes back at its next grid point and skips the points already past")
    func periodicRearm() {
        var store = DeadlineStore()
        let ticker = periodic(100, interval: 10)
        store.insert(ticker)
        let first = store.popDue(monotonicNow: 100, limit: store.nextSequence)
        #expect(first?.timer === ticker)
        store.reinsertAfterTick(ticker, monotonicNow: 101)
        #expect(ticker.deadline == 110 && ticker.ticks.index == 1 && ticker.ticks.missed == 0)
        _ = store.popDue(monotonicNow: 145, limit: store.nextSequence)
        // Ran late at 145: 120, 130 and 140 are past; the next tick is 150, no catch-up burst.
        store.reinsertAfterTick(ticker, monotonicNow: 145)
        #expect(ticker.deadline == 150 && ticker.ticks.index == 5 && ticker.ticks.missed == 3)
        _ = store.removeAll()
    }

    @Test("The first tick of a wall-clock periodic timer moves it to the monotonic grid of its date")
    func wallPeriodicMovesToMonotonic() {
        let ticker = periodic(1_000, interval: 100, wall: true)
        // Fired 250 ns after its date: grid points at +100 and +200 passed; it stands at +200.
        DeadlineStore.moveToMonotonicGrid(ticker, wallLateness: 250, monotonicNow: 10_000)
        #expect(!ticker.isWall && ticker.ticks.grid.origin == 9_950 && ticker.ticks.missed == 2)
        var store = DeadlineStore()
        store.reinsertAfterTick(ticker, monotonicNow: 10_000)
        #expect(ticker.deadline == 10_050)
        _ = store.removeAll()
    }

    @Test("Emptied heaps give memory back only when nothing is due soon")
    func memory() {
        var store = DeadlineStore()
        let entries = (0..<50_000).map { _ in timer(Nanoseconds.never - 1) }
        for entry in entries { store.insert(entry) }
        let soon = timer(10)
        store.insert(soon)
        for entry in entries { store.remove(entry) }
        #expect(store.slotCapacity >= 50_000)
        store.giveBackMemory(monotonicNow: 0, wallNow: 0)
        #expect(store.slotCapacity >= 50_000, "shrank with a timer due within the quiet period")
        store.remove(soon)
        store.giveBackMemory(monotonicNow: 0, wallNow: 0)
        #expect(store.slotCapacity < 2_048)
    }

    @Test("Deadlines saturate: huge or negative delays never trap")
    func deadlines() {
        #expect(DeadlineStore.deadline(after: .seconds(Int64.max) * 2, now: 5) == Nanoseconds.never)
        #expect(DeadlineStore.deadline(after: Duration(secondsComponent: .max, attosecondsComponent: .max), now: 5) == .max)
        #expect(DeadlineStore.deadline(after: .seconds(-10), now: 5) == 5)
        #expect(DeadlineStore.deadline(after: .nanoseconds(1), now: .max - 1) == .max)
    }

    @Test("Entries fit their allocator size classes: a task takes a 48-byte chunk, a one-shot timer a 64-byte one")
    func entrySizes() {
        #if canImport(Glibc)
        typealias UsableSize = @convention(c) (UnsafeMutableRawPointer?) -> Int
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_usable_size") else {
            Issue.record("malloc_usable_size not found")
            return
        }
        let usableSize = unsafeBitCast(symbol, to: UsableSize.self)
        // glibc's usable size of a 48-byte chunk is 40 bytes, of a 64-byte chunk 56. It may hand a
        // request a larger free chunk whose remainder is too small to split off (seen: 72 usable
        // for a timer): the smallest of many allocations is the chunk the request itself needs.
        let tasks = (0..<64).map { _ in LoopWork(action: {}) }
        let oneShots = (0..<64).map { timer(Int64($0)) }
        let taskSize = tasks.map { usableSize(Unmanaged.passUnretained($0).toOpaque()) }.min()!
        let timerSize = oneShots.map { usableSize(Unmanaged.passUnretained($0).toOpaque()) }.min()!
        #expect(taskSize <= 40, "a task entry takes \(taskSize) usable bytes")
        #expect(timerSize <= 56, "a timer entry takes \(timerSize) usable bytes")
        #endif
    }
}
