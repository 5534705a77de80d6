/// Waits until `condition` holds, suspending between looks instead of blocking, so a cooperative
/// thread stays free for the tasks the condition waits on (two blocked threads are the whole pool on
/// two cores).
///
/// The budget counts only the time this task could have run: a pool that blocking tests starve for
/// seconds keeps this task and the tasks it waits on off every thread alike, so a wall-clock
/// deadline would fail a condition nobody had a chance to make true. Each look counts at most
/// 20 ms, so a real hang still fails.
@discardableResult
public func eventuallyAsync(
    timeout: Duration = .seconds(20),
    every interval: Duration = .milliseconds(2),
    _ condition: () -> Bool
) async -> Bool {
    var budget = timeout
    while !condition() {
        if budget <= .zero { return false }
        let before = ContinuousClock.now
        try? await Task.sleep(for: interval)
        budget -= min(ContinuousClock.now - before, .milliseconds(20))
    }
    return true
}
