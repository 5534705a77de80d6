import Dispatch
import Foundation
import Scheduling
import Synchronization
import LoopSchedulingTestSupport
import Testing

@Suite("Immediate and subscription schedulers (rule 7)")
struct ImmediateAndSubscriptionTests {
    @Test("ImmediateScheduler runs before schedule returns and returns an already-disposed disposable")
    func immediateRunsInline() {
        let ran = LockedValue(false)
        let disposable = Schedulers.immediate.schedule { ran.withLock { $0 = true } }
        #expect(ran.withLock { $0 })
        #expect(disposable.isDisposed)
    }

    @Test("ImmediateScheduler is not a DateScheduler")
    func immediateHasNoPeriodicTimers() {
        let scheduler: any Scheduler = Schedulers.immediate
        #expect(!(scheduler is any DateScheduler))
    }

    @Test("SubscriptionScheduler runs inline when there is a current scheduler")
    func subscriptionInline() {
        let outer = TestScheduler()
        let subscription = SubscriptionScheduler()
        let log = LockedValue<[String]>([])
        outer.schedule {
            subscription.schedule { log.withLock { $0.append("inline, current is outer: \(outer.isCurrent)") } }
            log.withLock { $0.append("after") }
        }
        outer.advance()
        #expect(log.withLock { $0 } == ["inline, current is outer: true", "after"])
    }

    @Test("SubscriptionScheduler uses its background scheduler when there is no current scheduler")
    func subscriptionBackground() async {
        let subscription = SubscriptionScheduler()
        let onBackground = await withCheckedContinuation { done in
            DispatchQueue.global().async {
                subscription.schedule { done.resume(returning: subscription.background.isCurrent) }
            }
        }
        #expect(onBackground)
    }

    @Test("SubscriptionScheduler's timers go to the current date scheduler")
    func subscriptionTimersFollowCurrent() {
        let outer = TestScheduler()
        let subscription = SubscriptionScheduler()
        let ranOnOuter = LockedValue(false)
        outer.schedule {
            subscription.schedule(after: .seconds(5)) { ranOnOuter.withLock { $0 = outer.isCurrent } }
        }
        outer.advance()
        #expect(outer.pendingCount == 1, "the timer went to the current (test) scheduler")
        outer.advance(by: .seconds(5))
        #expect(ranOnOuter.withLock { $0 })
    }
}

@Suite("Schedulers")
struct SchedulersTests {
    @Test("Priorities map to Dispatch qualities of service as RACScheduler's do")
    func priorities() {
        #expect(SchedulerPriority.high.qos == .userInitiated)
        #expect(SchedulerPriority.default.qos == .default)
        #expect(SchedulerPriority.low.qos == .utility)
        #expect(SchedulerPriority.background.qos == .background)
    }

    @Test("background(priority:name:) makes a new serial scheduler each time")
    func backgroundIsNew() {
        let first = Schedulers.background(priority: .low, name: "a")
        let second = Schedulers.background()
        #expect(first !== second)
        #expect(first.queue.label == "a")
    }

    @Test("A queue scheduler targeting a concurrent queue still runs one action at a time")
    func targetQueueStaysSerial() async {
        let scheduler = QueueScheduler(name: "target", targeting: .global())
        let running = Atomic<Int>(0)
        let overlapped = Atomic<Bool>(false)
        let ran = Atomic<Int>(0)
        for _ in 0..<200 {
            scheduler.schedule {
                if running.add(1, ordering: .relaxed).newValue > 1 { overlapped.store(true, ordering: .relaxed) }
                running.subtract(1, ordering: .relaxed)
                ran.add(1, ordering: .relaxed)
            }
        }
        #expect(await eventually { ran.load(ordering: .relaxed) == 200 })
        let didOverlap = overlapped.load(ordering: .relaxed)
        #expect(!didOverlap)
    }
}
