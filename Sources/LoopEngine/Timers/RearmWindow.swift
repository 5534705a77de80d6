#if DEBUG
import Synchronization

/// Debug builds only: where a re-arm from another thread can be held, between writing its deadline
/// and publishing it (`ActionLifecycle.beginRearm` … `endRearm`), so that a test can show that the
/// loop never waits for such a re-arm: it fires, disposes and re-arms other timers meanwhile, and
/// leaves this one to the re-arm (Docs/Design.md §4.13).
package final class RearmWindow: Sendable {
    private let hold = Mutex<(@Sendable (LoopTimer) -> Void)?>(nil)

    /// Calls `body` with the timer inside every later re-arm from another thread; nil stops it.
    func set(_ body: (@Sendable (LoopTimer) -> Void)?) {
        hold.withLock { $0 = body }
    }

    /// Inside a re-arm's window: runs the test's body, if one is set.
    func pause(_ timer: LoopTimer) {
        guard let body = hold.withLock({ $0 }) else { return }
        body(timer)
    }
}
#endif
