// The one file of `Scheduling` with raw pointers. The project keeps unsafe pointer code in
// `LoopScheduling` (Docs/Design.md §2); the rule gives way here because `TestScheduler.drive` lives
// in `Scheduling` and must reach three things the Swift runtime exports only as C symbols: the
// global-enqueue hook (a variable), a job's task id, and the current task. Everything else about
// taking tasks in (which job belongs to which scheduler) is safe Swift, in TaskCapture.swift.

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
/// swift-concurrency-extras' `withMainSerialExecutor`: installed on the first
/// ``TestScheduler/drive(_:)``, chaining to whatever hook was there, and never restored. Every
/// `drive` looks again: a slot emptied since (`withMainSerialExecutor` sets it to nil when it
/// ends) or given back to the hook this one chains to gets this hook again (chaining to nothing,
/// or to that hook); any other hook there is foreign, and `drive` throws
/// ``TestSchedulerHookConflict``. While no scheduler has taken in a task and no `drive` runs, the
/// hook passes every job on at once (two relaxed atomic loads).
package enum GlobalEnqueueHook {
    /// The runtime declares the hook and the `original` it passes with the Swift calling
    /// convention. For these signatures (one pointer; a pointer and a function pointer; a pointer
    /// in, an integer or a pointer out) Swift passes and returns them in the same registers as C on
    /// the 64-bit platforms Swift runs on, which is how SwiftNIO and others call them too. A
    /// `@convention(c)` function isolated to nothing: a hook closure formed in main-actor code gets
    /// a dynamic isolation check, which fails on a pool thread.
    package typealias Original = @convention(c) (UnsafeMutableRawPointer) -> Void
    package typealias Hook = @convention(c) (UnsafeMutableRawPointer, Original) -> Void
    private typealias JobTaskID = @convention(c) (UnsafeMutableRawPointer) -> UInt64
    private typealias CurrentTask = @convention(c) () -> UnsafeMutableRawPointer?
    /// `dladdr(address, info)`: looked up rather than imported (Glibc declares it only for
    /// `_GNU_SOURCE`, which Swift's Glibc module does not define).
    private typealias DLAddr = @convention(c) (UnsafeRawPointer, UnsafeMutableRawPointer) -> Int32
    /// `Dl_info`, the same four pointers in the same order on glibc, musl and Darwin.
    private struct SymbolInfo {
        var imagePath: UnsafePointer<CChar>? = nil
        var imageBase: UnsafeMutableRawPointer? = nil
        var symbolName: UnsafePointer<CChar>? = nil
        var symbolAddress: UnsafeMutableRawPointer? = nil
    }
    /// `swift_demangle(name, length, buffer, bufferSize, flags)`: a `malloc`ed string, or nil.
    private typealias Demangle = @convention(c) (
        UnsafePointer<CChar>, Int, UnsafeMutablePointer<CChar>?, UnsafeMutablePointer<Int>?, UInt32
    ) -> UnsafeMutablePointer<CChar>?

    /// The runtime's exports, looked up once; nil where the runtime lacks one (then nothing is
    /// taken in, and `drive` runs only what prefers the scheduler, as before).
    private struct Runtime: @unchecked Sendable {  // pointers into the runtime, written once, then only read
        let slot: UnsafeMutablePointer<Hook?>
        let jobTaskID: JobTaskID
        let currentTask: CurrentTask
        let demangle: Demangle?
        let dladdr: DLAddr?

        static let shared: Runtime? = {
            func look(_ name: String) -> UnsafeRawPointer? {
                address(ofExported: name).flatMap { UnsafeRawPointer(bitPattern: $0) }
            }
            guard let slot = look("swift_task_enqueueGlobal_hook"),
                let jobTaskID = look("swift_task_getJobTaskId"),
                let currentTask = look("swift_task_getCurrent")
            else { return nil }
            return Runtime(
                slot: UnsafeMutableRawPointer(mutating: slot).assumingMemoryBound(to: Hook?.self),
                jobTaskID: unsafeBitCast(jobTaskID, to: JobTaskID.self),
                currentTask: unsafeBitCast(currentTask, to: CurrentTask.self),
                demangle: look("swift_demangle").map { unsafeBitCast($0, to: Demangle.self) },
                dladdr: look("dladdr").map { unsafeBitCast($0, to: DLAddr.self) }
            )
        }()
    }

    /// The hook this one chains to (SwiftNIO's, for one), as a bit pattern; 0 for none. Written
    /// before this hook is put in the slot, under ``installing``.
    private static let previous = Atomic<UInt>(0)
    /// Serialises installations; holds whether this hook was ever put in the slot.
    private static let installing = LockedValue<Bool>(false)

    private static func bits(_ hook: Hook?) -> UInt {
        hook.map { UInt(bitPattern: unsafeBitCast($0, to: UnsafeRawPointer.self)) } ?? 0
    }

    private static var ours: UInt { bits(enqueueGlobalHook) }

    /// What ``install()`` found in the slot.
    package enum Installation: Equatable {
        /// This hook is in the slot (it was, or it is now).
        case inSlot
        /// The runtime exports no slot: nothing is taken in.
        case unavailable
        /// Another hook, at this address, holds the slot; it was left there.
        case foreign(UInt)
    }

    /// Puts this hook in the slot, chaining to the hook there, the first time; later, again if the
    /// slot is empty (then chaining to nothing) or holds the hook it chains to; never over another.
    package static func install() -> Installation {
        guard let runtime = Runtime.shared else { return .unavailable }
        // The slot is a plain variable the runtime reads on every global enqueue; this package's
        // own reads and writes of it are ordered by the lock (another hook's owner writes it
        // unordered, as everywhere this slot is shared).
        return installing.withLock { everInstalled in
            let current = bits(runtime.slot.pointee)
            if current == ours { return .inSlot }
            if everInstalled && current != 0 && current != previous.load(ordering: .relaxed) {
                return .foreign(current)
            }
            previous.store(current, ordering: .releasing)
            runtime.slot.pointee = enqueueGlobalHook
            everInstalled = true
            return .inSlot
        }
    }

    /// Whether the slot still holds this hook: false when another hook was installed after it
    /// (SwiftNIO's takeover started later, or `withMainSerialExecutor` while its body runs), which
    /// then sees the global jobs first.
    package static var isInSlot: Bool {
        guard let runtime = Runtime.shared else { return false }
        return installing.withLock { _ in bits(runtime.slot.pointee) == ours }
    }

    /// Puts `hook` in the slot (nil empties it), as another library would: for the tests of
    /// `drive`'s re-installation, in a process of their own.
    package static func replaceSlotForTesting(with hook: Hook?) {
        guard let runtime = Runtime.shared else { return }
        installing.withLock { _ in runtime.slot.pointee = hook }
    }

    /// The name the dynamic loader gives the function at `address` (demangled where it is a Swift
    /// symbol), with its image; nil where it finds no symbol (a function not exported).
    package static func symbol(at address: UInt) -> String? {
        var info = SymbolInfo()
        guard let dladdr = Runtime.shared?.dladdr, let pointer = UnsafeRawPointer(bitPattern: address),
            withUnsafeMutableBytes(of: &info, { dladdr(pointer, $0.baseAddress!) }) != 0,
            let name = info.symbolName
        else { return nil }
        let symbol = demangled(name) ?? String(cString: name)
        guard let image = info.imagePath else { return symbol }
        let path = String(cString: image)
        return "\(symbol) in \(path.split(separator: "/").last.map(String.init) ?? path)"
    }

    /// The address of the exported function `name`, for the tests of ``symbol(at:)``.
    package static func address(ofExported name: String) -> UInt? {
        #if canImport(Darwin)
        let handle = UnsafeMutableRawPointer(bitPattern: -2)  // RTLD_DEFAULT
        #else
        let handle = UnsafeMutableRawPointer(bitPattern: 0)  // RTLD_DEFAULT
        #endif
        return dlsym(handle, name).map { UInt(bitPattern: $0) }
    }

    /// The runtime's `swift_demangle` of a mangled Swift name; nil for any other name.
    private static func demangled(_ name: UnsafePointer<CChar>) -> String? {
        guard let demangle = Runtime.shared?.demangle, let result = demangle(name, strlen(name), nil, nil, 0)
        else { return nil }
        defer { free(result) }
        return String(cString: result)
    }

    /// The runtime's 64-bit id of the task `job` runs, from one process-wide counter, never reused
    /// (unlike the task's address); for a job that is not a task, its job id, 0 for the runtime's.
    package static func taskID(of job: UnownedJob) -> UInt64 {
        guard let runtime = Runtime.shared else { return 0 }
        return runtime.jobTaskID(unsafeBitCast(job, to: UnsafeMutableRawPointer.self))
    }

    /// The runtime's id of `task`: a task made now has an id above every task that exists.
    package static func taskID<Success, Failure>(of task: Task<Success, Failure>) -> UInt64 {
        guard let runtime = Runtime.shared else { return 0 }
        // A `Task` is one reference to the runtime's task object, which is the task's job.
        return withExtendedLifetime(task) { runtime.jobTaskID(unsafeBitCast(task, to: UnsafeMutableRawPointer.self)) }
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
