import Synchronization

extension Scheduler {
    /// The default recursion: every run goes through ``Scheduler/schedule(_:)``.
    @discardableResult
    public func scheduleRecursive(
        _ action: @escaping @Sendable (_ reschedule: @escaping @Sendable () -> Void) -> Void
    ) -> any Disposable {
        let recursion = Recursion(scheduler: self, action: action)
        recursion.scheduleNext()
        return recursion
    }
}

/// Recursive scheduling through a scheduler's `schedule(_:)`. Disposing it disposes every run
/// still waiting and releases the action at once.
private final class Recursion: Disposable {
    private enum Pending {
        /// `schedule` has not returned yet; the run may already have happened on another thread.
        case scheduling
        case scheduled(any Disposable)
    }

    private struct State {
        var isDisposed = false
        var nextKey = 0
        var pending: [Int: Pending] = [:]
        var action: (@Sendable (_ reschedule: @escaping @Sendable () -> Void) -> Void)?
    }

    private let scheduler: any Scheduler
    private let state: LockedValue<State>

    init(scheduler: any Scheduler, action: @escaping @Sendable (@escaping @Sendable () -> Void) -> Void) {
        self.scheduler = scheduler
        self.state = LockedValue(State(action: action))
    }

    var isDisposed: Bool { state.withLock { $0.isDisposed } }

    func scheduleNext() {
        let key: Int? = state.withLock { state in
            guard !state.isDisposed else { return nil }
            let key = state.nextKey
            state.nextKey &+= 1
            state.pending[key] = .scheduling
            return key
        }
        guard let key else { return }
        let disposable = scheduler.schedule { [self] in run(key) }
        let disposeNow = state.withLock { state in
            if state.isDisposed { return true }
            // Absent: it already ran on another thread before `schedule` returned.
            if state.pending[key] != nil { state.pending[key] = .scheduled(disposable) }
            return false
        }
        if disposeNow { disposable.dispose() }
    }

    private func run(_ key: Int) {
        let action = state.withLock { state in
            state.pending.removeValue(forKey: key) != nil ? state.action : nil
        }
        action? { [self] in scheduleNext() }
    }

    func dispose() {
        let pending: [Int: Pending]? = state.withLock { state in
            guard !state.isDisposed else { return nil }
            state.isDisposed = true
            state.action = nil
            defer { state.pending = [:] }
            return state.pending
        }
        for case .scheduled(let disposable) in pending?.values ?? [:].values { disposable.dispose() }
    }
}
