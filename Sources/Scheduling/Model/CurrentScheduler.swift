import Dispatch
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The thread-local "current scheduler", shared at `package` level so the loop engine can set it.
///
/// A pthread key holds a per-thread slot object (created on first use, released by the key's
/// destructor when the thread exits). That is one `pthread_getspecific` per read: no dictionary
/// look-up, unlike `Thread.threadDictionary` (which once crashed RxSwift on Linux, RxSwift#1911).
package enum CurrentScheduler {
    /// The per-thread slot. Only its own thread ever touches it.
    private final class Slot {
        var scheduler: (any Scheduler)?
        /// A scheduler held weakly, for a whole batch of actions (the loop engine): shown when no
        /// scheduler is set strongly on top of it.
        var weak: WeakSchedulerBox?
        /// Whether the thread runs a loop (the loop engine's `LoopThreadMarker`).
        var isLoopThread = false
        /// The scheduler of the SwiftNIO event loop this thread runs (SchedulingNIO's look-up cache).
        var eventLoopScheduler: AnyObject?
    }

    /// What the slot held before ``enterBatch(_:)``, to put back with ``leaveBatch(_:)``.
    package struct Saved {
        fileprivate let scheduler: (any Scheduler)?
        fileprivate let weak: WeakSchedulerBox?
    }

    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        let rc = pthread_key_create(&key) { slot in
            guard let slot else { return }
            Unmanaged<AnyObject>.fromOpaque(slot).release()
        }
        precondition(rc == 0, "pthread_key_create failed for the current-scheduler key: \(rc)")
        return key
    }()

    private static var slot: Slot {
        if let raw = pthread_getspecific(key) {
            return Unmanaged<Slot>.fromOpaque(raw).takeUnretainedValue()
        }
        let slot = Slot()
        let rc = pthread_setspecific(key, Unmanaged.passRetained(slot).toOpaque())
        precondition(rc == 0, "pthread_setspecific failed for the current-scheduler key: \(rc)")
        return slot
    }

    /// Whether the calling thread is marked as running a loop: the loop engine's marker, kept in this
    /// per-thread slot so that it needs no thread-local storage of its own.
    package static var isLoopThread: Bool {
        get { slot.isLoopThread }
        set { slot.isLoopThread = newValue }
    }

    /// A per-thread cache for SchedulingNIO: the scheduler of the event loop the thread runs, so
    /// that `eventLoop.scheduler` on the loop thread takes no lock. Held strongly, for the thread's
    /// life or until replaced.
    package static var eventLoopSchedulerCache: AnyObject? {
        get { slot.eventLoopScheduler }
        set { slot.eventLoopScheduler = newValue }
    }

    /// The scheduler explicitly set on this thread, without the main-queue fallback.
    package static var explicit: (any Scheduler)? {
        let slot = self.slot
        return slot.scheduler ?? slot.weak?.scheduler
    }

    /// Makes `box`'s scheduler current for a batch of actions, held weakly: the batch must not keep
    /// the scheduler alive, or a user's last release would not be the last and its shutdown would
    /// not wait (the scheduler would be deinitialised later, on the loop thread). While its
    /// `deinit` runs, the weak reference reads nil.
    package static func enterBatch(_ box: WeakSchedulerBox) -> Saved {
        let slot = self.slot
        let saved = Saved(scheduler: slot.scheduler, weak: slot.weak)
        slot.scheduler = nil
        slot.weak = box
        return saved
    }

    /// Restores what ``enterBatch(_:)`` replaced.
    package static func leaveBatch(_ saved: Saved) {
        let slot = self.slot
        slot.scheduler = saved.scheduler
        slot.weak = saved.weak
    }

    /// Runs `body` with `scheduler` as current and restores the previous value afterwards.
    package static func withCurrent<Result, Failure: Error>(
        _ scheduler: any Scheduler,
        _ body: () throws(Failure) -> Result
    ) throws(Failure) -> Result {
        let slot = self.slot
        let previous = slot.scheduler
        slot.scheduler = scheduler
        defer { slot.scheduler = previous }
        return try body()
    }

    /// A key set on the main queue, so code running on it (or on a queue targeting it) is
    /// recognised even when, as under an async `main`, the main queue runs on another thread.
    private static let mainQueueKey: DispatchSpecificKey<UInt8> = {
        let key = DispatchSpecificKey<UInt8>()
        DispatchQueue.main.setSpecific(key: key, value: 1)
        return key
    }()

    /// Whether the caller runs on the main thread or on the main queue (RACScheduler's check).
    package static var isOnMain: Bool {
        Thread.isMainThread || DispatchQueue.getSpecific(key: mainQueueKey) != nil
    }

    /// Ensures the main-queue key is installed before any work is put on the main queue.
    package static func installMainQueueKey() {
        _ = mainQueueKey
    }
}

/// A weak reference to a scheduler, for the current-scheduler slot of a batch.
// The reference is written once, before the box is used on the loop thread, and weak loads are
// atomic in the runtime.
package final class WeakSchedulerBox: @unchecked Sendable {
    package weak var scheduler: (any Scheduler)?
    package init() {}
}
