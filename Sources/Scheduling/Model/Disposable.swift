/// A handle that cancels scheduled work or releases a resource.
///
/// `dispose()` is idempotent and thread-safe: it may be called any number of times, from any
/// thread, including from inside the action it cancels. Only the first call has an effect.
///
/// For work handed to a scheduler, disposing before the action starts guarantees that it never
/// starts; disposing while it runs does not interrupt it. Dropping a disposable without calling
/// `dispose()` cancels nothing (<doc:BehaviourContract>, rule 1).
public protocol Disposable: AnyObject, Sendable {
    /// Whether `dispose()` has been called, by the user or by a scheduler shutting down.
    ///
    /// Running an action does not dispose its disposable. A `true` answer is final; a `false`
    /// answer may be stale by the time the caller acts on it when another thread disposes.
    var isDisposed: Bool { get }

    /// Cancels the work or releases the resource. Idempotent; safe from any thread.
    func dispose()
}

/// Ready-made disposables.
public enum Disposables {
    /// A disposable that is already disposed; schedulers return it when nothing is left to
    /// cancel (an action that already ran inline, or work refused after shutdown).
    ///
    /// It is one shared instance: comparing disposables by identity tells nothing about the work.
    public static let disposed: any Disposable = {
        let disposable = ActionDisposable()
        disposable.dispose()
        return disposable
    }()
}
