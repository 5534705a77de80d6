import Foundation
import LoopSchedulingTestSupport
import Scheduling
import Synchronization
import Testing

/// Global enqueues the foreign hook below saw (in the child process of each test).
private let foreignHookCalls = Atomic<Int>(0)

/// Another library's global-enqueue hook, as SwiftNIO's takeover would be: passes every job on.
private let foreignHook: GlobalEnqueueHook.Hook = { job, original in
    foreignHookCalls.add(1, ordering: .relaxed)
    original(job)
}

private func bits(_ hook: GlobalEnqueueHook.Hook) -> UInt {
    UInt(bitPattern: unsafeBitCast(hook, to: UnsafeRawPointer.self))
}

/// Holds a scheduler a test releases on purpose.
private final class Holder: @unchecked Sendable {  // set and cleared by the child's one task
    var scheduler: TestScheduler?
    init(_ scheduler: TestScheduler) { self.scheduler = scheduler }
}

/// A task that prefers `other` (so no global enqueue ever carries it), parked on a continuation;
/// resumed, its job goes to `other` again.
private final class ForeignTask: Sendable {
    let task: Task<Void, Never>
    let id: UInt64
    private let continuation: Mutex<CheckedContinuation<Void, Never>?>

    init(preferring other: TestScheduler) async {
        let (parked, feed) = AsyncStream<CheckedContinuation<Void, Never>>.makeStream()
        task = Task(executorPreference: other) { await withCheckedContinuation { feed.yield($0) } }
        id = GlobalEnqueueHook.taskID(of: task)
        other.advance()  // its first job: it parks
        var iterator = parked.makeAsyncIterator()
        continuation = Mutex(await iterator.next())
    }

    func resume() { continuation.withLock { $0.take() }?.resume() }
}

/// A task `drive` takes in, returning whether it ran on the test scheduler (false, with the error
/// recorded, if drive throws).
private func takenInTask(on test: TestScheduler) async -> Bool {
    do {
        return try await test.drive { await Task { Schedulers.current === test }.value }
    } catch {
        Issue.record("drive threw \(error)")
        return false
    }
}

/// `drive`'s task capture where it changes process-wide state — the runtime's hook slot, the
/// capture's lock counter — or stops the program: each test runs in a child process of its own.
@Suite("drive's task capture: process-wide state and stops", .serialized)
struct DriveCaptureCrashTests {
    static func expectMessage(_ result: ExitTest.Result?, contains text: String) {
        guard let result else { return }
        let output = String(decoding: result.standardErrorContent, as: UTF8.self)
        #expect(output.contains(text), "stderr did not say \"\(text)\":\n\(output)")
    }

    #if DEBUG
    @Test("DEBUG: a scheduler released inside the capture's registry lock stops the program")
    func releaseInsideTheLock() async {
        let result = await ExitTests.serially {
            await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                startWatchdog()
                let holder = Holder(TestScheduler())
                try? await holder.scheduler!.drive {}  // it has a scope
                TaskCapture.withRegistryLockedForTesting { holder.scheduler = nil }
            }
        }
        Self.expectMessage(result, contains: "TestScheduler released inside the task capture's registry lock")
    }
    #endif

    @Test("Once the last scheduler that took a task in is released, a global enqueue takes no lock")
    func fastPathBackAtRelease() async {
        _ = await ExitTests.serially {
            await #expect(processExitsWith: .success) {
                startWatchdog()
                let holder = Holder(TestScheduler())
                #expect(await takenInTask(on: holder.scheduler!))
                #expect(holder.scheduler!.takenInTaskCount == 1)
                TaskCapture.lockedGlobalEnqueues.store(0, ordering: .relaxed)
                await Task.detached {}.value
                #expect(TaskCapture.lockedGlobalEnqueues.load(ordering: .relaxed) > 0, "the scope is alive: the slow path")
                weak let released = holder.scheduler
                holder.scheduler = nil
                #expect(released == nil)
                TaskCapture.lockedGlobalEnqueues.store(0, ordering: .relaxed)
                for _ in 0..<100 { await Task.detached {}.value }
                #expect(TaskCapture.lockedGlobalEnqueues.load(ordering: .relaxed) == 0)
            }
        }
    }

    @Test("A hook slot emptied after the first drive: the next drive installs the hook again and takes tasks in")
    func slotEmptied() async {
        _ = await ExitTests.serially {
            await #expect(processExitsWith: .success) {
                startWatchdog()
                #expect(await takenInTask(on: TestScheduler()))
                #expect(GlobalEnqueueHook.isInSlot)
                GlobalEnqueueHook.replaceSlotForTesting(with: nil)  // as withMainSerialExecutor does as it ends
                #expect(!GlobalEnqueueHook.isInSlot)
                let test = TestScheduler()
                #expect(await takenInTask(on: test), "the plain task ran on the global pool")
                #expect(test.takenInTaskCount == 1)
                #expect(GlobalEnqueueHook.isInSlot)
            }
        }
    }

    @Test("A slot given back to the hook drive chained to: the next drive installs again, still chaining to it")
    func slotGivenBack() async {
        _ = await ExitTests.serially {
            await #expect(processExitsWith: .success) {
                startWatchdog()
                GlobalEnqueueHook.replaceSlotForTesting(with: foreignHook)  // there before the first drive
                #expect(await takenInTask(on: TestScheduler()))
                #expect(GlobalEnqueueHook.isInSlot)
                GlobalEnqueueHook.replaceSlotForTesting(with: foreignHook)  // its owner puts it back
                let test = TestScheduler()
                #expect(await takenInTask(on: test))
                #expect(test.takenInTaskCount == 1)
                #expect(GlobalEnqueueHook.isInSlot)
                // What drive does not take goes on through the hook it chains to.
                let before = foreignHookCalls.load(ordering: .relaxed)
                await Task.detached {}.value
                #expect(foreignHookCalls.load(ordering: .relaxed) > before)
            }
        }
    }

    @Test("A foreign hook in the slot: drive throws TestSchedulerHookConflict naming it, and runs no body")
    func foreignHookThrows() async {
        _ = await ExitTests.serially {
            await #expect(processExitsWith: .success) {
                startWatchdog()
                #expect(await takenInTask(on: TestScheduler()))
                GlobalEnqueueHook.replaceSlotForTesting(with: foreignHook)  // installed after the first drive
                let ran = Atomic<Bool>(false)
                let error = await #expect(throws: TestSchedulerHookConflict.self) {
                    try await TestScheduler().drive { ran.store(true, ordering: .relaxed) }
                }
                let bodyRan = ran.load(ordering: .relaxed)
                #expect(!bodyRan)
                #expect(error?.hookAddress == bits(foreignHook))
                // The test binary exports no symbols: dladdr names none (its own test names one).
                #expect(error?.hookSymbol == GlobalEnqueueHook.symbol(at: bits(foreignHook)))
                #expect(error?.description.contains("0x" + String(bits(foreignHook), radix: 16)) == true)
                #expect(!GlobalEnqueueHook.isInSlot, "drive left the foreign hook in place")
                // Gone again: drive works again.
                GlobalEnqueueHook.replaceSlotForTesting(with: nil)
                #expect(await takenInTask(on: TestScheduler()))
            }
        }
    }

    @Test("A task made before the drive, preferring another scheduler, resumed by the drive's work or a member: not taken in")
    func olderForeignTaskStaysOut() async {
        // In a process of its own, so that nothing drives while the foreign tasks are made: the
        // capture sees no id then (the hook passes every job on at once), the case the bound made
        // at the drive's start is for.
        _ = await ExitTests.serially {
            await #expect(processExitsWith: .success) {
                startWatchdog()
                for _ in 0..<50 {
                    let other = TestScheduler()
                    let byAction = await ForeignTask(preferring: other)
                    let byMember = await ForeignTask(preferring: other)
                    let test = TestScheduler()
                    test.schedule { byAction.resume() }  // runs in the drive, before the body
                    try? await test.drive { byMember.resume() }
                    #expect(!TaskCapture.isTakenIn(byAction.id), "resumed by the scheduler's work")
                    #expect(!TaskCapture.isTakenIn(byMember.id), "resumed by a member")
                    #expect(test.takenInTaskCount == 0)
                    other.advance()  // their last jobs
                    await byAction.task.value
                    await byMember.task.value
                }
            }
        }
    }

    @Test("advance stops the program when a member spins on Task.yield() at one virtual instant")
    func advanceStopsASpin() async {
        let result = await ExitTests.serially {
            await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                // A million jobs take about ten seconds here: the watchdog is for a hang only.
                startWatchdog(seconds: 600)
                let test = TestScheduler()
                try! await test.drive {
                    Task(executorPreference: test) {  // joins the scope
                        try await test.sleep(for: .seconds(1))
                        while true { await Task.yield() }  // polls, at 1 s forever
                    }
                }
                test.advance(by: .seconds(2))
            }
        }
        Self.expectMessage(
            result,
            contains: "TestScheduler.advance(by:): ran 1000000 actions in a row at virtual time 2001-01-01 00:00:01 +0000 "
                + "without the clock moving: task "
        )
        Self.expectMessage(result, contains: "keeps making itself ready at once")
    }
}
