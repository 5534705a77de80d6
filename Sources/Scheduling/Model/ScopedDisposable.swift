/// A disposable that disposes its inner disposable when it is deinitialized.
///
/// Keep it in a property to tie a subscription or a timer to an object's lifetime. It does not
/// keep itself alive: the last release, on whatever thread drops it, disposes the inner one there.
public final class ScopedDisposable: Disposable {
    /// The disposable this one disposes.
    public let inner: any Disposable

    /// Wraps `inner`.
    public init(_ inner: any Disposable) {
        self.inner = inner
    }

    deinit {
        inner.dispose()
    }

    /// Whether the inner disposable is disposed.
    public var isDisposed: Bool { inner.isDisposed }

    /// Disposes the inner disposable now.
    public func dispose() { inner.dispose() }
}
