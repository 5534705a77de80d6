import Foundation

/// Runs `body` on a thread made for it and suspends until it returns: how a test runs what must
/// block by its nature (a synchronous `shutdown()`, `LoopScheduler.run`, `concurrentPerform`, a
/// semaphore) without holding a thread of the cooperative pool, which has one thread per core.
public func onOwnThread<Result: Sendable>(
    name: String = "test.blocking",
    _ body: @escaping @Sendable () throws -> Result
) async throws -> Result {
    try await withCheckedThrowingContinuation { continuation in
        let thread = Thread { continuation.resume(with: Swift.Result { try body() }) }
        thread.name = name
        thread.start()
    }
}

/// ``onOwnThread(name:_:)`` for a body that does not throw.
public func onOwnThread<Result: Sendable>(
    name: String = "test.blocking",
    _ body: @escaping @Sendable () -> Result
) async -> Result {
    await withCheckedContinuation { continuation in
        let thread = Thread { continuation.resume(returning: body()) }
        thread.name = name
        thread.start()
    }
}
