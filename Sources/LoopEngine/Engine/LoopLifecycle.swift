import Foundation
import Synchronization

/// The lifecycle of one LoopScheduler's loop: the one place that says whether it accepts work,
/// whether it is draining, and whether it is closed.
///
/// ```
///  starting ──started──▶ open ──beginShutdown──▶ draining ──beginClosing──▶ closing ──didClose──▶ closed
///     │                                                                                          ▲
///     └──────────────────────────────setUpFailed─────────────────────────────────────────────────┘
/// ```
///
/// - `starting`: the handles are being set up; nothing is visible to users yet.
/// - `open`: `schedule` accepts work.
/// - `draining`: `shutdown()` began. New work is refused (an already-disposed disposable); the loop
///   runs every task accepted before, then disposes every timer.
/// - `closing`: the handles are closing: no wake-up can be sent any more.
/// - `closed`: the last close callback ran and an owned loop was closed: nothing will run again.
///
/// The state is one atomic byte, so the loop thread reads it without a lock. Every transition is
/// a compare-and-exchange through one of the functions below, which stop the program on an
/// impossible transition (NIO's state-machine style): a bug in the engine shows up where it
/// happens, not as a hang. The ``RemoteQueue`` owns it and calls `beginShutdown` and
/// `beginClosing` with its lock held, which orders them against submissions: a task is either
/// appended before the transition (and then drained) or refused after it, never lost between the
/// two. Threads and tasks waiting for `closed` wait on the state itself, under a condition that
/// the transitions to `closed` take.
package struct LoopLifecycle: ~Copyable {
    package enum State: UInt8, CustomStringConvertible {
        case starting, open, draining, closing, closed

        package var description: String {
            switch self {
            case .starting: "starting"
            case .open: "open"
            case .draining: "draining"
            case .closing: "closing"
            case .closed: "closed"
            }
        }
    }

    private let raw = Atomic<UInt8>(State.starting.rawValue)
    /// Who waits for `closed`: threads on the condition, tasks as callbacks.
    private let waiters = Waiters()

    init() {}

    /// The current state; any thread.
    @inline(__always)
    var state: State {
        State(rawValue: raw.load(ordering: .acquiring))!
    }

    /// Whether `schedule` accepts work now.
    @inline(__always)
    var isOpen: Bool { raw.load(ordering: .acquiring) == State.open.rawValue }

    /// `starting → open`: set-up finished; the scheduler is handed to its user.
    func started() {
        transition(from: .starting, to: .open, "started")
    }

    /// `starting → closed`: set-up failed and released everything it had acquired.
    func setUpFailed() {
        close(from: .starting, "setUpFailed")
    }

    /// `open → draining`. Returns false if shutdown had already begun (idempotent `shutdown()`).
    /// Called under the remote queue's lock.
    func beginShutdown() -> Bool {
        let (exchanged, original) = raw.compareExchange(
            expected: State.open.rawValue,
            desired: State.draining.rawValue,
            ordering: .acquiringAndReleasing
        )
        if exchanged { return true }
        let found = State(rawValue: original)!
        guard found != .starting else {
            fatalError("LoopLifecycle.beginShutdown: impossible transition from \(found) (set-up did not finish)")
        }
        return false
    }

    /// `draining → closing`: the loop drained the accepted work and is closing its handles. Called
    /// on the loop thread, under the remote queue's lock, so no submitter can be inside
    /// `uv_async_send` while the async handle closes.
    func beginClosing() {
        transition(from: .draining, to: .closing, "beginClosing")
    }

    /// `closing → closed`: the last close callback ran (and an owned loop was closed).
    func didClose() {
        close(from: .closing, "didClose")
    }

    /// Blocks the calling thread until the state is `closed`.
    func waitUntilClosed() {
        waiters.wait { state == .closed }
    }

    /// Calls `body` once the state is `closed`: at once if it is, otherwise from the thread that
    /// closes the loop (which must not block in it).
    func whenClosed(_ body: @escaping @Sendable () -> Void) {
        waiters.notify(body) { state == .closed }
    }

    /// The transition to `closed`, under the waiters' lock, then the callbacks outside it.
    private func close(from expected: State, _ name: StaticString) {
        waiters.release { transition(from: expected, to: .closed, name) }
    }

    private func transition(from expected: State, to next: State, _ name: StaticString) {
        let (exchanged, original) = raw.compareExchange(
            expected: expected.rawValue,
            desired: next.rawValue,
            ordering: .acquiringAndReleasing
        )
        if !exchanged {
            fatalError(
                "LoopLifecycle.\(name): impossible transition from \(State(rawValue: original)!) (expected \(expected))"
            )
        }
    }
}

/// The threads and callbacks waiting for a lifecycle to reach `closed`. Whether it has is the
/// lifecycle's state itself, read under this lock, which the transition to `closed` takes.
// `callbacks` is only touched with `condition` locked, inside these methods.
private final class Waiters: @unchecked Sendable {
    private let condition = NSCondition()
    private var callbacks: [@Sendable () -> Void] = []

    /// Runs `transition` (to `closed`) under the lock, wakes the blocked threads, then runs the
    /// callbacks outside the lock.
    func release(_ transition: () -> Void) {
        condition.lock()
        transition()
        let callbacks = self.callbacks
        self.callbacks = []
        condition.broadcast()
        condition.unlock()
        for callback in callbacks { callback() }
    }

    func wait(until isClosed: () -> Bool) {
        condition.lock()
        while !isClosed() { condition.wait() }
        condition.unlock()
    }

    func notify(_ body: @escaping @Sendable () -> Void, unless isClosed: () -> Bool) {
        condition.lock()
        if isClosed() {
            condition.unlock()
            body()
            return
        }
        callbacks.append(body)
        condition.unlock()
    }
}
