/// A loop's shutdown, the whole sequence in one place (Docs/Design.md §5.5). Its state is the
/// lifecycle (``LoopLifecycle``), which the ``RemoteQueue`` owns because its transitions race with
/// submissions; this type holds the steps, in the order they happen:
///
/// 1. **Begin** (any thread, ``begin(_:)``): `open → draining` under the queue's lock, so a task
///    is either accepted before (and runs) or refused after; a wake-up tells the loop.
/// 2. **Finish** (the loop thread, ``finish(_:)``): at the loop's next callback — at once when
///    begun on the loop thread outside a batch, after the batch from inside one — every accepted
///    task and job runs, the intake closes (`draining → closing`) at a moment both queues are
///    empty, every timer is disposed, every handle is closed.
/// 3. **Closed** (the loop thread): an owned loop once `uv_run` returned and the loop is closed
///    (``ownedLoopClosed(_:)``, from ``LoopCore/runOwnedLoop()``); an adopted one, which the host
///    keeps running, at its last handle's close callback (``handlesClosed(_:)``). Recycled entries go, the thread id is forgotten,
///    `closing → closed` wakes whoever waits.
/// 4. **Wait** (the caller, on a thread that runs no loop, ``shutdown(_:)``): until `closed`,
///    then the own thread is joined; the async form waits without holding a thread.
package enum LoopShutdown {
    // MARK: 1. Begin

    /// Begins shutdown without ever blocking; on the loop thread outside a batch it also finishes
    /// at once. Idempotent.
    package static func begin(_ core: LoopCore) {
        let onLoop = core.isOnLoopThread
        _ = core.remote.beginShutdown(onLoopThread: onLoop)
        if onLoop && !core.runner.inBatch && core.lifecycle.state == .draining { finish(core) }
    }

    // MARK: 2. Finish

    /// On the loop thread, once shutdown began: runs every accepted task and job, closes the
    /// intake, disposes every timer, closes every handle. On an adopted loop this may run in the
    /// host's own code (a `shutdown()` or a last release on its thread, before or after its first
    /// `uv_run`): while actions run, its thread is a loop thread, as in any batch.
    package static func finish(_ core: LoopCore) {
        let marked = LoopThreadMarker.enter()
        core.runner.drainAndCloseIntake(core)
        LoopThreadMarker.leave(marked)
        core.timers.disposeAll(core)
        core.publishStatistics()
        core.driver.closeAll()
    }

    // MARK: 3. Closed

    /// An owned loop's `uv_run` returned, every handle closed, and the loop is closed: so is the
    /// scheduler.
    package static func ownedLoopClosed(_ core: LoopCore) {
        closed(core)
    }

    /// The last handle's close callback. An adopted loop belongs to the host, who goes on running
    /// it: the scheduler is closed now. An owned loop is closed once `uv_run` returns.
    package static func handlesClosed(_ core: LoopCore) {
        if core.mode.isRunByOthers { closed(core) }
    }

    private static func closed(_ core: LoopCore) {
        core.publishStatistics()
        core.recycler.dropAll()
        // The loop thread is done with the loop; its id may soon belong to another thread (glibc
        // reuses thread descriptors), which must not pass for the loop thread.
        core.loopThread.forget()
        core.lifecycle.didClose()
    }

    // MARK: 4. Wait

    /// Begins shutdown from any thread, and on a thread that runs no loop waits until the loop is
    /// closed (and its own thread joined).
    ///
    /// On this loop's thread it completes after the current batch (or at once outside a batch)
    /// without waiting for itself. On another loop's thread it only begins: waiting there could
    /// deadlock two loops that shut each other down.
    package static func shutdown(_ core: LoopCore) {
        begin(core)
        if core.isOnLoopThread || LoopThreadMarker.isLoopThread { return }
        core.lifecycle.waitUntilClosed()
        core.ownThread?.join()
    }

    /// The same without holding a thread while it waits; it does wait on another loop's thread,
    /// where suspending blocks nothing. On this loop's own thread it only begins.
    package static func shutdown(_ core: LoopCore) async {
        begin(core)
        // On this loop's own thread, waiting would wait for itself.
        guard !core.isOnLoopThread else { return }
        await untilClosed(core)
        // The thread exits right after closing the loop: this join waits for nothing but that.
        core.ownThread?.join()
    }

    /// Returns once the loop is closed, however its shutdown began (also when it is closed already).
    package static func untilClosed(_ core: LoopCore) async {
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            core.lifecycle.whenClosed { done.resume() }
        }
    }

    /// The public object's last reference went. On a loop thread (this loop's, or another loop's,
    /// which must not wait) nobody is left to join the own thread, so it detaches.
    package static func lastReferenceDropped(_ core: LoopCore) {
        if core.isOnLoopThread || LoopThreadMarker.isLoopThread { core.ownThread?.detachWhenFinished() }
        shutdown(core)
    }
}
