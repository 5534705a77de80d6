import Foundation
import Synchronization

/// Runs every action inline, on the caller's thread, before `schedule` returns
/// (RACImmediateScheduler).
///
/// It does not change ``Schedulers/current``: the action runs in the caller's context. Its timers
/// block the caller until they are due, then run the action; it has no periodic timers, which is
/// why it is a ``Scheduler`` and not a ``DateScheduler``. Recursion trampolines: a million
/// reschedules run in a loop, not a million nested frames.
public final class ImmediateScheduler: Scheduler {
    /// Use ``Schedulers/immediate``.
    public init() {}

    /// Runs `action` now.
    ///
    /// - Returns: an already-disposed disposable: there is nothing left to cancel.
    @discardableResult
    public func schedule(_ action: __owned @escaping @Sendable () -> Void) -> any Disposable {
        action()
        return Disposables.disposed
    }

    /// Blocks the caller for `delay` (monotonic clock), then runs `action`.
    ///
    /// A zero or negative delay runs at once. A saturated delay such as `.seconds(Int64.max)` blocks
    /// the caller for as long as it says: the action cannot be cancelled, since the disposable is
    /// only returned after it ran.
    @discardableResult
    public func schedule(after delay: Duration, _ action: __owned @escaping @Sendable () -> Void) -> any Disposable {
        let deadline = Nanoseconds.adding(Nanoseconds.monotonicNow(), Nanoseconds.delay(delay))
        Self.sleep { Nanoseconds.subtracting(deadline, Nanoseconds.monotonicNow()) }
        action()
        return Disposables.disposed
    }

    /// Blocks the caller until the wall clock reaches `date`, then runs `action`. It re-reads the
    /// wall clock at least once a second, so a clock step shortens or lengthens the wait.
    @discardableResult
    public func schedule(at date: Date, _ action: __owned @escaping @Sendable () -> Void) -> any Disposable {
        BadInput.checkDate(date, method: "ImmediateScheduler.schedule(at:)")
        let deadline = Nanoseconds.sinceEpoch(date)
        Self.sleep { min(Nanoseconds.subtracting(deadline, Nanoseconds.wallNow()), 1_000_000_000) }
        action()
        return Disposables.disposed
    }

    /// Sleeps in slices until `remaining()` is no longer positive.
    private static func sleep(_ remaining: () -> Int64) {
        while true {
            let nanoseconds = remaining()
            if nanoseconds <= 0 { return }
            var request = timespec(tv_sec: Int(nanoseconds / 1_000_000_000), tv_nsec: Int(nanoseconds % 1_000_000_000))
            var remainder = timespec()
            while nanosleep(&request, &remainder) == -1 && errno == EINTR { request = remainder }
        }
    }

    /// Runs `action` inline and again, in the same frame, each time it calls `reschedule`.
    ///
    /// `reschedule` called from another thread after the loop finished starts a new loop on that
    /// thread, as `schedule` would. Disposing stops every later run.
    @discardableResult
    public func scheduleRecursive(
        _ action: @escaping @Sendable (_ reschedule: @escaping @Sendable () -> Void) -> Void
    ) -> any Disposable {
        let trampoline = Trampoline(action)
        trampoline.request()
        return trampoline
    }
}

/// The immediate scheduler's recursion: a run counter and a flag saying whether some thread is
/// already looping, so nested requests become iterations instead of frames.
private final class Trampoline: Disposable {
    private struct State {
        var isLooping = false
        var requested = 0
        var action: (@Sendable (_ reschedule: @escaping @Sendable () -> Void) -> Void)?
    }

    private let disposed = Atomic<Bool>(false)
    private let state: LockedValue<State>

    init(_ action: @escaping @Sendable (@escaping @Sendable () -> Void) -> Void) {
        state = LockedValue(State(action: action))
    }

    var isDisposed: Bool { disposed.load(ordering: .acquiring) }

    func dispose() {
        guard !disposed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        let action = state.withLock { $0.action.take() }
        _ = action
    }

    func request() {
        let shouldLoop = state.withLock { state in
            state.requested += 1
            if state.isLooping { return false }
            state.isLooping = true
            return true
        }
        guard shouldLoop else { return }
        let reschedule: @Sendable () -> Void = { [self] in request() }
        while true {
            let action: (@Sendable (@escaping @Sendable () -> Void) -> Void)?? = state.withLock { state in
                guard state.requested > 0, !isDisposed else {
                    state.isLooping = false
                    return .none
                }
                state.requested -= 1
                return .some(state.action)
            }
            guard let action else { return }
            action?(reschedule)
        }
    }
}
