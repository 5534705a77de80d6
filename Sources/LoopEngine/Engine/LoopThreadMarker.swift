@_spi(SchedulerEngine) import Scheduling

/// Marks the threads that run a loop, so that a `shutdown()` called on one never blocks waiting for
/// another loop (two loops shutting each other down from inside actions would deadlock). Set for
/// the whole life of an own loop thread, for `run(name:_:)`'s caller while it runs the loop, and
/// around every batch of a loop someone else runs (an adopted libuv loop, a SwiftNIO event loop).
/// Kept in the current-scheduler slot of the thread (`CurrentScheduler`), one per thread.
package enum LoopThreadMarker {
    /// Whether the calling thread is running a loop.
    package static var isLoopThread: Bool { CurrentScheduler.isLoopThread }

    package static func markCurrentThread() {
        CurrentScheduler.isLoopThread = true
    }

    /// Marks the thread until the matching ``leave(_:)``, unless it is marked already (an own
    /// loop thread, or nested). Returns whether it marked it, for `leave`.
    @inline(__always)
    package static func enter() -> Bool {
        guard !isLoopThread else { return false }
        markCurrentThread()
        return true
    }

    /// Ends what ``enter()`` began: unmarks the thread if that call marked it.
    @inline(__always)
    package static func leave(_ marked: Bool) {
        if marked { CurrentScheduler.isLoopThread = false }
    }
}
