import Synchronization

/// A disposable that holds one inner disposable at a time and disposes the old one when it is
/// replaced.
///
/// Setting `inner` after the serial disposable was disposed disposes the new value at once. The
/// old value is disposed outside the lock, on the thread that set the new one.
public final class SerialDisposable: Disposable {
    private struct State {
        var isDisposed = false
        var inner: (any Disposable)?
    }

    private let state: LockedValue<State>

    /// Makes a serial disposable, optionally holding `inner`.
    public init(_ inner: (any Disposable)? = nil) {
        state = LockedValue(State(inner: inner))
    }

    /// Whether `dispose()` has been called.
    public var isDisposed: Bool {
        state.withLock { $0.isDisposed }
    }

    /// The current inner disposable. Setting it disposes the previous one; once the serial
    /// disposable is disposed, setting it disposes the new one and reading it returns nil.
    public var inner: (any Disposable)? {
        get { state.withLock { $0.inner } }
        set {
            let toDispose: (any Disposable)? = state.withLock { state in
                if state.isDisposed { return newValue }
                defer { state.inner = newValue }
                return state.inner
            }
            if let toDispose, toDispose !== newValue || isDisposed { toDispose.dispose() }
        }
    }

    /// Disposes the inner disposable; later calls do nothing.
    public func dispose() {
        let toDispose: (any Disposable)? = state.withLock { state in
            guard !state.isDisposed else { return nil }
            state.isDisposed = true
            defer { state.inner = nil }
            return state.inner
        }
        toDispose?.dispose()
    }
}
