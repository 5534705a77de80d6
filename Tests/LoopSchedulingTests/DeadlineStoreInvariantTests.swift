import Scheduling
import Testing

@testable import LoopEngine
@testable import LoopScheduling

/// The store's invariant checker (`DeadlineStore.invariantViolations`, which debug builds run before
/// the loop arms) under rule 13: what re-arming in place may leave behind is no violation, a timer
/// filed where it would fire after its deadline is one.
@Suite("Loop timer store: the invariant checker")
struct DeadlineStoreInvariantTests {
    static let second: Int64 = 1_000_000_000

    /// Files a timer in a wheel bucket (30 s out), one in the monotonic heap (due within the first
    /// tick) and a wall-clock one.
    static func fill(_ store: inout DeadlineStore) -> (far: LoopTimer, near: LoopTimer, wall: LoopTimer) {
        let far = LoopTimer(core: nil, deadline: 30 * second, isWall: false, action: {})
        let near = LoopTimer(core: nil, deadline: 500_000, isWall: false, action: {})
        let wall = LoopTimer(core: nil, deadline: 1_700_000_000 * second, isWall: true, action: {})
        for timer in [far, near, wall] { store.insert(timer) }
        return (far, near, wall)
    }

    @Test("A timer whose deadline moved earlier with nothing to file it again is late: reported in a wheel bucket, the monotonic heap and the wall-clock heap")
    func earlierBehindTheStoresBack() {
        var store = DeadlineStore()
        let (far, near, wall) = Self.fill(&store)
        #expect(far.heapIndex <= -2 && near.heapIndex >= 0 && wall.heapIndex >= 0, "the timers are not where the test needs them")
        let sound = store.invariantViolations()
        #expect(sound.isEmpty, "\(sound)")
        // Written in place as a re-arm from another thread does, but with no `rearmed` item queued:
        // nothing will file them again, and each would fire after its deadline.
        for (timer, earlier) in [(far, 5 * Self.second), (near, 400_000), (wall, 1_600_000_000 * Self.second)] {
            _ = timer.exchangeDeadline(earlier)
            let found = store.invariantViolations()
            #expect(found.count >= 1 && found.allSatisfy { $0.contains("late") }, "\(found)")
            // Filed again by it, as the loop does with the queued item: sound.
            store.reposition(timer)
            let after = store.invariantViolations()
            #expect(after.isEmpty, "\(after)")
        }
        _ = store.removeAll()
    }

    @Test("A timer whose re-arm is still queued to the loop is judged by the deadline it was filed by, until the loop files it again")
    func earlierWithItsRearmQueued() {
        var store = DeadlineStore()
        let (far, near, _) = Self.fill(&store)
        _ = far.exchangeDeadline(5 * Self.second)
        _ = near.exchangeDeadline(400_000)
        let queued: Set<ObjectIdentifier> = [ObjectIdentifier(far), ObjectIdentifier(near)]
        let awaiting = store.invariantViolations { queued.contains(ObjectIdentifier($0)) }
        #expect(awaiting.isEmpty, "\(awaiting)")
        // The loop's own judgement: a one-shot timer of a loop may await its re-arm; one of no loop
        // (these) may not.
        #expect(!DeadlineStore.mayAwaitRearm(far))
        let strict = store.invariantViolations()
        #expect(strict.count >= 2, "\(strict)")
        for timer in [far, near] { store.reposition(timer) }
        let filed = store.invariantViolations()
        #expect(filed.isEmpty, "\(filed)")
        _ = store.removeAll()
    }

    @Test("What rule 13 leaves behind is no violation: a later deadline written in place, in a bucket or a heap, and a lazy re-arm in its bucket")
    func laterIsNoViolation() {
        var store = DeadlineStore()
        let (far, near, wall) = Self.fill(&store)
        let bucket = far.heapIndex
        // On the loop thread: later, in the wheel, only written (the one lag the wheel allows).
        store.rearm(far, to: 40 * Self.second)
        #expect(far.heapIndex == bucket, "a later deadline moved the timer")
        // From another thread: later ones, found when the bucket moves or the timer is popped.
        _ = far.exchangeDeadline(35 * Self.second)
        _ = near.exchangeDeadline(2 * Self.second)
        _ = wall.exchangeDeadline(1_800_000_000 * Self.second)
        let found = store.invariantViolations()
        #expect(found.isEmpty, "\(found)")
        // The heap timer popped by its old key is not due by its deadline: it goes back with its
        // sequence, keyed by the deadline it has.
        let popped = store.popDue(monotonicNow: 1_000_000, limit: store.nextSequence)
        #expect(popped?.timer === near && near.deadline > 1_000_000)
        if let popped { store.refile(popped.timer, sequence: popped.sequence) }
        let refiled = store.invariantViolations()
        #expect(refiled.isEmpty, "\(refiled)")
        // The bucket moves by the deadline the timer has then: it fires at 35 s, not before (and the
        // store checks itself as it arms, in this debug build).
        store.remove(wall)
        let fired = DeadlineStoreModelTests.fireAll(&store, from: 1_000_000)
        #expect(fired.map { ObjectIdentifier($0.timer) } == [ObjectIdentifier(near), ObjectIdentifier(far)])
        #expect(fired.map(\.clock) == [2 * Self.second, 35 * Self.second], "fired at \(fired.map(\.clock)), not at their deadlines")
    }

    @Test("A periodic timer is judged by its own deadline, on a loop too: only the store moves it")
    func periodicNeverAwaitsARearm() {
        let periodic = PeriodicLoopTimer(core: nil, deadline: 30 * Self.second, isWall: false, interval: Self.second, leeway: 0) { _ in }
        #expect(!DeadlineStore.mayAwaitRearm(periodic))
        var store = DeadlineStore()
        store.insert(periodic)
        periodic.deadline = Self.second  // behind the store's back
        let found = store.invariantViolations()
        #expect(!found.isEmpty, "a periodic timer filed late was not reported")
        _ = store.removeAll()
    }
}
