import Synchronization

/// A disposable that runs an action once, on the first `dispose()`, or that is a plain flag
/// when made without an action.
///
/// The first caller of `dispose()` runs the action on its own thread, before `dispose()` returns;
/// later and concurrent callers return at once, possibly before the first caller's action has
/// finished. The action is released as soon as it has run.
public final class ActionDisposable: Disposable {
    private let disposed = Atomic<Bool>(false)
    private let action: LockedValue<(@Sendable () -> Void)?>

    /// Makes a disposable that runs `action` on the first `dispose()`.
    public init(_ action: @escaping @Sendable () -> Void) {
        self.action = LockedValue(action)
    }

    /// Makes a disposable that is only a flag.
    public init() {
        self.action = LockedValue(nil)
    }

    /// Whether `dispose()` has been called. Lock-free.
    public var isDisposed: Bool {
        disposed.load(ordering: .acquiring)
    }

    /// Runs the action if this is the first call; otherwise does nothing.
    public func dispose() {
        guard !disposed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        let action = self.action.withLock { action in
            defer { action = nil }
            return action
        }
        action?()
    }
}
