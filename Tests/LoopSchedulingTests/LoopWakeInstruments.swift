// The instruments the wake-up tests (LoopWakeTests.swift) stop and watch the loop with.

import Dispatch
import Foundation
import Scheduling
import Synchronization
import LoopSchedulingTestSupport

@testable import LoopEngine
@testable import LoopScheduling

/// A metrics delegate that, once armed, stops the loop in its next prepare callback until the test
/// lets it go, then runs an action there.
final class PrepareHook: LoopSchedulerMetricsDelegate {
    private let action = LockedValue<(@Sendable () -> Void)?>(nil)
    /// Told by the loop thread, awaited by the test: each used once.
    private let (inside, enter) = AsyncStream.makeStream(of: Void.self)
    private let (done, finish) = AsyncStream.makeStream(of: Void.self)
    /// Blocks the loop thread (not the test's) until the test lets it go.
    private let release = DispatchSemaphore(value: 0)

    func arm(_ body: @escaping @Sendable () -> Void) { action.withLock { $0 = body } }
    func waitUntilInside() async { for await _ in inside {} }
    /// Lets the action run and waits for it: a task sent meanwhile would make the loop's wake-up
    /// pending, and with one pending the queue is left for that wake-up to take, in order.
    func proceedAndWait() async {
        release.signal()
        for await _ in done {}
    }

    func loopIterationDidEnd(_ info: LoopIterationInfo) {
        guard let body = action.withLock({ $0.take() }) else { return }
        enter.finish()
        release.wait()
        body()
        finish.finish()
    }
}

/// A metrics delegate that records each iteration's end and the wake-up it armed (read on the loop
/// thread), and, once asked, holds the loop at the end of the next iteration that took items from
/// other threads (a timer filed or removed), or of the next iteration at all, until the test lets it
/// go. Held there, the loop has armed its driver and published its promise, and cannot look at its
/// queue again.
///
/// An iteration reports here only as it ends, after it published its promise: asked for from another
/// thread, the hold may catch an iteration that had taken its items before the test sent its own.
/// Asked for while the loop thread is stopped where the test knows (held here, or inside a batch), it
/// catches the iteration the test means.
final class FlushHold: LoopSchedulerMetricsDelegate {
    struct Iteration: Sendable {
        var end: Int64
        var armed: Int64?
        /// The loop armed a look within the flush interval: it is flushing (or a timer is that close).
        var looksWithinFlushInterval: Bool { armed.map { $0 <= end + LoopCore.flushInterval } ?? false }
    }

    /// Which iteration to hold next.
    private enum Trigger {
        case none
        /// The next one that took items.
        case tookItems
        /// The next one.
        case any
    }

    private struct State {
        var holdNext = Trigger.none
        var held: Iteration?
        var latest: Iteration?
        var pending = 0
    }

    private let state = LockedValue(State())
    private let armedDeadline = LockedValue<(@Sendable () -> Int64?)?>(nil)
    /// Blocks the loop thread (not the test's) while held.
    private let release = DispatchSemaphore(value: 0)

    /// Reads `loop`'s armed wake-up at each iteration's end; weakly, the loop holds this delegate.
    func watch(_ loop: LoopScheduler) {
        armedDeadline.withLock { $0 = { [weak loop] in loop?.core.timers.armedDeadline } }
    }

    func holdNext() { state.withLock { $0.holdNext = .tookItems } }
    /// Holds the iteration that ends next, whatever it took: called on the loop thread, in a batch,
    /// that is the iteration the batch belongs to.
    func holdNextIteration() { state.withLock { $0.holdNext = .any } }
    var held: Iteration? { state.withLock { $0.held } }
    var latest: Iteration? { state.withLock { $0.latest } }

    func letGo() {
        let wasHeld = state.withLock { state in
            defer { state.held = nil }
            return state.held != nil
        }
        if wasHeld { release.signal() }
    }

    /// Holds no more iterations and lets a held one go: shutdown needs the loop thread.
    func stopHolding() {
        state.withLock { $0.holdNext = .none }
        letGo()
    }

    func loopIterationDidEnd(_ info: LoopIterationInfo) {
        let armed = armedDeadline.withLock { $0 }?()
        let holds = state.withLock { state in
            let iteration = Iteration(end: Nanoseconds.of(info.end), armed: armed)
            let tookItems = info.disposedBeforeRun > 0 || info.timersPending != state.pending
            state.pending = info.timersPending
            state.latest = iteration
            switch state.holdNext {
            case .none: return false
            case .tookItems: guard tookItems else { return false }
            case .any: break
            }
            state.holdNext = .none
            state.held = iteration
            return true
        }
        if holds { release.wait() }
    }
}

/// Counts the wake-ups a ``RemoteQueue`` sends, and passes each on to the loop, if there is one
/// (the queue's unit test has none).
final class WakeCounter: LoopWaker {
    private let wakes = Atomic<Int>(0)
    /// The loop's handles live until the loop closed; nothing is sent after that.
    private unowned let target: (any LoopWaker)?

    init(forwardingTo target: (any LoopWaker)? = nil) {
        self.target = target
    }

    var count: Int { wakes.load(ordering: .relaxed) }

    func wake() {
        wakes.add(1, ordering: .relaxed)
        target?.wake()
    }
}
