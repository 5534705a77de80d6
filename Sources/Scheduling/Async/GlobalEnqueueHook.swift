// The one file of `Scheduling` with raw pointers. The project keeps unsafe pointer code in
// `LoopScheduling` (Docs/Design.md §2); the rule gives way here because `TestScheduler.drive` lives
// in `Scheduling` and must reach three things the Swift runtime exports only as C symbols: the
// global-enqueue hook (a variable), a job's task id, and the current task. Everything else about
// taking tasks in (which job belongs to which scheduler) is safe Swift, in
// TestScheduler+Scope.swift.

import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The Swift runtime's `swift_task_enqueueGlobal_hook`: every job bound for the global concurrent
/// executor passes through it (a `Task {}`, also one created inside a task with an executor
/// preference; a continuation resumed for a task on the global pool; a hop back to the pool).
///
/// One process-wide slot, shared with SwiftNIO's global-executor takeover and
/// swift-concurrency-extras' `withMainSerialExecutor`: installed once, on the first
/// ``TestScheduler/drive(_:)``, chaining to whatever hook was there, and never restored. While no
/// scheduler has taken in a task and no `drive` runs, it passes every job on at once (two relaxed
/// atomic loads).
package enum GlobalEnqueueHook {
    /// The runtime declares the hook and the `original` it passes with the Swift calling
    /// convention. For these signatures (one pointer; a pointer and a function pointer; a pointer
    /// in, an integer or a pointer out) Swift passes and returns them in the same registers as C on
    /// the 64-bit platforms Swift runs on, which is how SwiftNIO and others call them too. A
    /// `@convention(c)` function isolated to nothing: a hook closure formed in main-actor code gets
    /// a dynamic isolation check, which fails on a pool thread.
    typealias Original = @convention(c) (UnsafeMutableRawPointer) -> Void
    typealias Hook = @convention(c) (UnsafeMutableRawPointer, Original) -> Void
    private typealias JobTaskID = @convention(c) (UnsafeMutableRawPointer) -> UInt64
    private typealias CurrentTask = @convention(c) () -> UnsafeMutableRawPointer?

    /// The runtime's exports, looked up once; nil where the runtime lacks one (then nothing is
    /// taken in, and `drive` runs only what prefers the scheduler, as before).
    private struct Runtime: @unchecked Sendable {  // pointers into the runtime, written once, then only read
        let slot: UnsafeMutablePointer<Hook?>
        let jobTaskID: JobTaskID
        let currentTask: CurrentTask

        static let shared: Runtime? = {
            #if canImport(Darwin)
            let handle = UnsafeMutableRawPointer(bitPattern: -2)  // RTLD_DEFAULT
            #else
            let handle = UnsafeMutableRawPointer(bitPattern: 0)  // RTLD_DEFAULT
            #endif
            guard let slot = dlsym(handle, "swift_task_enqueueGlobal_hook"),
                let jobTaskID = dlsym(handle, "swift_task_getJobTaskId"),
                let currentTask = dlsym(handle, "swift_task_getCurrent")
            else { return nil }
            return Runtime(
                slot: slot.assumingMemoryBound(to: Hook?.self),
                jobTaskID: unsafeBitCast(jobTaskID, to: JobTaskID.self),
                currentTask: unsafeBitCast(currentTask, to: CurrentTask.self)
            )
        }()
    }

    /// The hook that was in the slot before ours (SwiftNIO's, for one), as a bit pattern; 0 for
    /// none. Written once, before ours is published.
    private static let previous = Atomic<UInt>(0)

    /// Installs the hook the first time it is called; true when it is installed (now or before).
    private static let installed: Bool = {
        guard let runtime = Runtime.shared else { return false }
        let before = runtime.slot.pointee
        previous.store(
            before.map { UInt(bitPattern: unsafeBitCast($0, to: UnsafeRawPointer.self)) } ?? 0,
            ordering: .releasing
        )
        runtime.slot.pointee = enqueueGlobalHook
        return true
    }()

    /// Installs the hook once per process (later calls only read a flag); false when the runtime
    /// does not export it.
    @discardableResult
    package static func install() -> Bool { installed }

    /// Whether the slot still holds this hook: false when another hook was installed after it
    /// (SwiftNIO's takeover started later, or `withMainSerialExecutor` while its body runs), which
    /// then sees the global jobs first.
    package static var isInSlot: Bool {
        guard installed, let runtime = Runtime.shared, let current = runtime.slot.pointee else { return false }
        return unsafeBitCast(current, to: UnsafeRawPointer.self)
            == unsafeBitCast(enqueueGlobalHook, to: UnsafeRawPointer.self)
    }

    /// The runtime's 64-bit id of the task `job` runs, from one process-wide counter, never reused
    /// (unlike the task's address); for a job that is not a task, its job id, 0 for the runtime's.
    package static func taskID(of job: UnownedJob) -> UInt64 {
        guard let runtime = Runtime.shared else { return 0 }
        return runtime.jobTaskID(unsafeBitCast(job, to: UnsafeMutableRawPointer.self))
    }

    /// The id of the task running on this thread; 0 outside a task.
    package static var currentTaskID: UInt64 {
        guard let runtime = Runtime.shared, let task = runtime.currentTask() else { return 0 }
        return runtime.jobTaskID(task)
    }

    /// Passes a job the scopes do not take on to the hook that was there before, or to the runtime.
    fileprivate static func passOn(_ job: UnsafeMutableRawPointer, _ original: Original) {
        let bits = previous.load(ordering: .acquiring)
        if bits != 0, let pointer = UnsafeRawPointer(bitPattern: bits) {
            unsafeBitCast(pointer, to: Hook.self)(job, original)
        } else {
            original(job)
        }
    }
}

/// The hook itself: a job a ``TestScheduler`` took in goes to that scheduler; every other job goes
/// on as if the hook were not there.
private let enqueueGlobalHook: GlobalEnqueueHook.Hook = { job, original in
    if TaskCapture.takeIn(unsafeBitCast(job, to: UnownedJob.self)) { return }
    GlobalEnqueueHook.passOn(job, original)
}
