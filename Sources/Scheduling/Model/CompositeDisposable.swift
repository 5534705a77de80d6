import Synchronization

/// A disposable that disposes every disposable added to it, once.
///
/// ```swift
/// let all = CompositeDisposable()
/// let token = all.add(scheduler.schedule { work() })
/// token.dispose()   // forgets the entry without cancelling the work
/// all.dispose()     // cancels what is still in it
/// ```
///
/// Adding to a composite that is already disposed disposes the new entry at once (on the
/// caller's thread, before `add(_:)` returns). Entries are disposed outside the lock, so an
/// entry's own dispose action may add to or remove from the composite.
///
/// - Complexity: `add(_:)` and removal are O(1) amortized; `dispose()` is O(n).
public final class CompositeDisposable: Disposable {
    private struct State {
        var isDisposed = false
        var nextKey = 0
        var entries: [Int: any Disposable] = [:]
    }

    private let state = LockedValue(State())

    /// Makes an empty composite.
    public init() {}

    /// Makes a composite holding `disposables`.
    public init(_ disposables: [any Disposable]) {
        for disposable in disposables { add(disposable) }
    }

    /// Whether `dispose()` has been called.
    public var isDisposed: Bool {
        state.withLock { $0.isDisposed }
    }

    /// The number of entries still held. Zero once disposed.
    public var count: Int {
        state.withLock { $0.entries.count }
    }

    /// Adds `disposable`, or disposes it at once if the composite is already disposed.
    ///
    /// - Returns: a token whose `dispose()` removes the entry *without* disposing it. Disposing the
    ///   token after the composite was disposed does nothing.
    @discardableResult
    public func add(_ disposable: any Disposable) -> any Disposable {
        let key: Int? = state.withLock { state in
            guard !state.isDisposed else { return nil }
            let key = state.nextKey
            state.nextKey &+= 1
            state.entries[key] = disposable
            return key
        }
        guard let key else {
            disposable.dispose()
            return Disposables.disposed
        }
        return ActionDisposable { [weak self] in self?.remove(key) }
    }

    /// Adds an action to run when the composite is disposed.
    @discardableResult
    public func add(_ action: @escaping @Sendable () -> Void) -> any Disposable {
        add(ActionDisposable(action))
    }

    private func remove(_ key: Int) {
        // The removed entry is released outside the lock: its deinit may run user code.
        let removed = state.withLock { $0.entries.removeValue(forKey: key) }
        _ = removed
    }

    /// Disposes every entry once; later calls do nothing.
    public func dispose() {
        let entries: [Int: any Disposable]? = state.withLock { state in
            guard !state.isDisposed else { return nil }
            state.isDisposed = true
            defer { state.entries = [:] }
            return state.entries
        }
        guard let entries else { return }
        // Disposed in the order they were added, which is what a reader expects of a log.
        for key in entries.keys.sorted() { entries[key]!.dispose() }
    }
}
