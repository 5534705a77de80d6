/// Waits until `condition` holds, suspending between looks instead of blocking, so a cooperative
/// thread stays free for the tasks the condition waits on (two blocked threads are the whole pool on
/// two cores). `condition` may itself await (a round trip to a loop). The one polling helper of the tests: prefer a hand-over (a continuation resumed by
/// the action, an `AsyncStream`) where the code under test can give one.
///
/// The budget counts only the time this task could have run: a pool that blocking tests starve for
/// seconds keeps this task and the tasks it waits on off every thread alike, so a wall-clock
/// deadline would fail a condition nobody had a chance to make true. Each look counts at most
/// 20 ms, so a real hang still fails.
@discardableResult
public func eventually(
    timeout: Duration = .seconds(20),
    every interval: Duration = .milliseconds(1),
    _ condition: () async -> Bool
) async -> Bool {
    var budget = timeout
    while await !condition() {
        if budget <= .zero { return false }
        let before = ContinuousClock.now
        try? await Task.sleep(for: interval)
        budget -= min(ContinuousClock.now - before, .milliseconds(20))
    }
    return true
}
