import LoopScheduling

/// Runs `body`, then shuts `loop` down by awaiting (never blocking a pool thread), also when `body`
/// throws: the tests' `defer { loop.shutdown() }`.
public func shuttingDown<Result>(_ loop: LoopScheduler, _ body: () async throws -> Result) async rethrows -> Result {
    do {
        let result = try await body()
        await loop.shutdown()
        return result
    } catch {
        await loop.shutdown()
        throw error
    }
}
