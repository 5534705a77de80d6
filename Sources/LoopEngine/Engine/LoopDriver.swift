/// Wakes a loop from any thread: its driver, or a test's stand-in.
package protocol LoopWaker: AnyObject {
    /// Makes the loop take its queue soon; coalescing. Called under the queue's lock.
    func wake()
}

/// What the engine (``LoopCore``) asks of the loop that runs it: libuv's handles
/// (`LoopScheduling`'s `UVHandles`) or a SwiftNIO event loop (`SchedulingNIO`). The loop calls the
/// engine back on its thread: ``LoopCore/asyncFired()`` after a ``LoopWaker/wake()``,
/// ``LoopCore/idleFired()`` while idling, ``LoopCore/timerFired()`` when the armed wake-up comes,
/// and ``LoopCore/prepareFired()`` before it would block, where the engine arms the next wake-up.
package protocol LoopDriver: LoopWaker {
    /// Whether ``LoopCore/prepareFired()`` runs before every block of the loop (libuv's prepare
    /// handle), so that a timer filed on the loop thread outside a batch is armed for in time. A
    /// loop without such a hook (SwiftNIO's) answers false, and the engine asks for a batch
    /// (``startIdle()``) when such a timer comes due before the armed wake-up.
    var preparesBeforeEveryBlock: Bool { get }
    /// Keeps the loop from blocking until ``stopIdle()``: the engine calls ``LoopCore/idleFired()``
    /// again soon. Idempotent.
    func startIdle()
    /// Ends ``startIdle()``.
    func stopIdle()
    /// Arms the one timer wake-up to call ``LoopCore/timerFired()`` `nanoseconds` from now
    /// (at least 1), replacing the one armed before.
    func arm(in nanoseconds: Int64)
    /// The loop's own cached clock in milliseconds, when it has one (libuv's loop time), for the
    /// metrics delegate's sleep time; nil when it has none.
    var loopTimeMillis: UInt64? { get }
    /// On a loop without a prepare hook (``preparesBeforeEveryBlock`` false), on the loop thread:
    /// the last timer left the store outside a batch (disposed), so nothing needs a wake-up now.
    /// (SwiftNIO's testing loops must hold no scheduled task when they are released.)
    func timersEmptied()
    /// Set-up failed after the driver was made (the own thread could not start): releases what it
    /// set up.
    func releaseAfterFailedSetUp()
    /// Shutdown's last step, on the loop thread: closes what the driver set up. An adopted or
    /// hosted loop (``LoopMode/adopted``) then calls `LoopShutdown.handlesClosed(_:)`.
    func closeAll()
}

/// The own thread of a loop (``LoopMode/ownThread``), which shutdown joins.
package protocol LoopOwnThread: AnyObject, Sendable {
    /// Waits until the thread ended; once, later callers wait for that.
    func join()
    /// Nobody will join (the scheduler was dropped on the thread itself): it detaches when it ends.
    func detachWhenFinished()
}
