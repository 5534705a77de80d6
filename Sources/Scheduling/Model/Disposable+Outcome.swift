/// A disposable that can tell whether its `dispose()` won the race with the action's start: for
/// checkers such as `loopsched crosscheck`, which cannot observe from outside the moment a
/// scheduler claims an action (a timestamp taken inside the action may come after `dispose()`
/// returned although the claim came first).
package protocol DisposeOutcomeReporting: Disposable {
    /// Disposes, and returns true if the action was still waiting (it will never start), false if
    /// it had already started, run or been disposed.
    func disposeReportingPending() -> Bool
}
