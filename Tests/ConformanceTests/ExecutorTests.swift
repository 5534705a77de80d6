import Foundation
import Scheduling
import Synchronization
import Testing

/// An actor pinned to the scheduler under test.
private actor Pinned {
    let scheduler: any Scheduler
    let executor: UnownedSerialExecutor
    var calls = 0

    init(_ harness: Harness) {
        scheduler = harness.scheduler
        executor = harness.serialExecutor.asUnownedSerialExecutor()
    }

    nonisolated var unownedExecutor: UnownedSerialExecutor { executor }

    /// Whether the method ran as the scheduler's work (its current scheduler, its isolation).
    func call() -> Bool {
        calls += 1
        return Schedulers.current === scheduler && scheduler.isRunningItsWork
    }

    func log(_ entry: String, into order: LockedValue<[String]>) {
        order.withLock { $0.append(entry) }
    }
}

/// A nonisolated async function that leaves whatever executor it was called on (SE-0338), the
/// call a task preferring a scheduler must make without a hop.
@concurrent
private func onGenericExecutor(_ scheduler: any Scheduler) async -> Bool {
    Schedulers.current === scheduler
}

extension Conformance {
    /// Rule 10: schedulers as executors (Docs/Design.md §8.1, §8.2).
    @Suite("10. Executors", .timeLimit(.minutes(10)))  // a hang guard, not a speed check: loaded runs took over 3 min
    struct Executors {
        @Test("An actor pinned to the scheduler runs every method as the scheduler's work", arguments: SchedulerKind.serialExecutors)
        func actorRunsOnScheduler(kind: SchedulerKind) async throws {
            try await Harness.with(kind) { harness in
                let pinned = Pinned(harness)
                let result = await harness.runTask { () -> Int in
                    var good = 0
                    for _ in 0..<50 where await pinned.call() { good += 1 }
                    return good
                }
                let good = try #require(result, "the calls did not finish on \(kind)").get()
                #expect(good == 50)
                // Read through a harness task: on the test scheduler the actor's job runs only when
                // virtual time is advanced, which the harness does while it waits.
                let calls = try #require(await harness.runTask { await pinned.calls }).get()
                #expect(calls == 50)
            }
        }

        @Test("A task that prefers the scheduler runs its nonisolated code there, the scheduler current", arguments: SchedulerKind.taskExecutors)
        func taskPreference(kind: SchedulerKind) async throws {
            try await Harness.with(kind) { harness in
                let scheduler = harness.scheduler
                let result = await harness.runTask(preferringScheduler: true) { () -> [Bool] in
                    let first = Schedulers.current === scheduler
                    // A nonisolated call and a suspension: the task stays on its preferred executor.
                    let nested = await onGenericExecutor(scheduler)
                    await Task.yield()
                    return [first, nested, Schedulers.current === scheduler]
                }
                let seen = try #require(result, "the task did not finish on \(kind)").get()
                #expect(seen == [true, true, true])
            }
        }

        #if DEBUG
        @Test("A trivial task costs one enqueue, and nonisolated calls inside it cost none", arguments: SchedulerKind.taskExecutors)
        func oneEnqueuePerTask(kind: SchedulerKind) async throws {
            try await Harness.with(kind) { harness in
                let scheduler = harness.scheduler
                let executor = harness.taskExecutor
                let before = EnqueueProbe.count(executor)
                let zero = try #require(await harness.runTask(preferringScheduler: true) { 0 }).get()
                #expect(zero == 0)
                let trivial = EnqueueProbe.count(executor) - before
                #expect(trivial == 1, "a trivial task was enqueued \(trivial) times on \(kind)")

                let start = EnqueueProbe.count(executor)
                let result = await harness.runTask(preferringScheduler: true) { () -> Bool in
                    var all = true
                    for _ in 0..<10 { all = await onGenericExecutor(scheduler) && all }
                    return all
                }
                let value4 = try #require(result).get()
                #expect(value4)
                let nested = EnqueueProbe.count(executor) - start
                #expect(nested == 1, "ten nonisolated calls cost \(nested - 1) extra enqueues on \(kind)")
            }
        }

        @Test("An actor pinned to the scheduler, called from a task that prefers it: one hop each way, no more", arguments: SchedulerKind.serialExecutors)
        func actorFromPreferringTask(kind: SchedulerKind) async throws {
            try await Harness.with(kind) { harness in
                let pinned = Pinned(harness)
                // The task's executor (the scheduler) and the object actors are pinned to.
                let taskSide: AnyObject = harness.taskExecutor
                let actorSide = actorExecutor(of: pinned)
                // (Compared outside `#expect`: Swift 6.3.1's SILGen crashes on `!==` of two
                // AnyObjects inside the macro.)
                let distinct = ObjectIdentifier(actorSide) != ObjectIdentifier(taskSide)
                #expect(distinct, "actors get their own executor object")
                let before = EnqueueProbe.count(taskSide) + EnqueueProbe.count(actorSide)
                let result = await harness.runTask(preferringScheduler: true) { () -> Int in
                    var good = 0
                    for _ in 0..<10 where await pinned.call() { good += 1 }
                    return good
                }
                let value5 = try #require(result).get()
                #expect(value5 == 10)
                let spent = EnqueueProbe.count(taskSide) + EnqueueProbe.count(actorSide) - before
                // The task's start, then into the actor and back out for each call: same thread, no
                // hand-off, but a trip through the scheduler's queue each way.
                #expect(spent == 1 + 2 * 10, "ten calls cost \(spent) enqueues on \(kind)")
            }
        }
        #endif

        @Test("Jobs and schedule(_:) share one FIFO", arguments: SchedulerKind.serialExecutors)
        func fifoWithSchedule(kind: SchedulerKind) async throws {
            try await Harness.with(kind) { harness in
                let scheduler = harness.scheduler
                let pinned = Pinned(harness)
                let order = LockedValue<[String]>([])
                let first = await harness.runTask { await pinned.call() }  // the actor is warm
                let value6 = try #require(first).get()
                #expect(value6)
                // From one action on the scheduler, so nothing else interleaves: a task, a task
                // that prefers the scheduler, an actor job, a task — queued in that order. The
                // immediate task runs on this thread up to its call into the actor, which enqueues
                // the actor's job right there.
                let executor = harness.taskExecutor
                scheduler.schedule {
                    scheduler.schedule { order.withLock { $0.append("task 1") } }
                    Task(executorPreference: executor) { order.withLock { $0.append("preferring task") } }
                    Task.immediate { await pinned.log("actor job", into: order) }
                    scheduler.schedule { order.withLock { $0.append("task 2") } }
                }
                #expect(await harness.eventually { order.withLock { $0.count } == 4 })
                #expect(order.withLock { $0 } == ["task 1", "preferring task", "actor job", "task 2"])
            }
        }

        @Test("assumeIsolated works for a pinned actor inside a plain action; the scheduler is not isolating elsewhere", arguments: SchedulerKind.serialExecutors)
        func assumeIsolatedInAction(kind: SchedulerKind) async throws {
            try await Harness.with(kind) { harness in
                let scheduler = harness.scheduler
                let serial = harness.serialExecutor
                let pinned = Pinned(harness)
                // The object the runtime asks for the actor (a scheduler hands actors its own).
                let actorSide = actorExecutor(of: pinned) as! any SerialExecutor
                let inside = LockedValue<[Bool?]>([])
                scheduler.schedule {
                    pinned.assumeIsolated { $0.calls += 1 }
                    inside.withLock { $0 = [serial.isIsolatingCurrentContext(), actorSide.isIsolatingCurrentContext()] }
                }
                #expect(await harness.eventually { !inside.withLock { $0 }.isEmpty })
                #expect(inside.withLock { $0 } == [true, true])
                #expect(serial.isIsolatingCurrentContext() == false)
                #expect(actorSide.isIsolatingCurrentContext() == false)
                if !kind.isVirtual {
                    // performAsCurrent on another thread sets the current scheduler, not isolation:
                    // answering true there would let assumeIsolated race the actor's own jobs.
                    let borrowed = scheduler.performAsCurrent { actorSide.isIsolatingCurrentContext() }
                    #expect(borrowed == false, "performAsCurrent off the scheduler passed for isolated on \(kind)")
                }
                let calls = try #require(await harness.runTask { await pinned.calls }).get()
                #expect(calls == 1)
            }
        }
    }
}

/// The executor object an actor is pinned to (a scheduler may hand actors a separate one).
private func actorExecutor(of actor: Pinned) -> AnyObject {
    // An ordinary unowned executor is the object's pointer and its conformance's witness table.
    let (object, _) = unsafeBitCast(actor.unownedExecutor, to: (UnsafeRawPointer, UnsafeRawPointer).self)
    return Unmanaged<AnyObject>.fromOpaque(object).takeUnretainedValue()
}
