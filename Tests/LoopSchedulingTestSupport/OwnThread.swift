import Foundation
import Scheduling

/// Runs `body` on a thread made for it and suspends until it returns: how a test runs what must
/// block by its nature (a synchronous `shutdown()`, `LoopScheduler.run`, `concurrentPerform`, a
/// semaphore) without holding a thread of the cooperative pool, which has one thread per core.
public func onOwnThread<Result: Sendable>(
    name: String = "test.blocking",
    _ body: @escaping @Sendable () throws -> Result
) async throws -> Result {
    // Handed over through a lock as well as the continuation, so the thread sanitizer sees what
    // the thread wrote published to the test.
    let outcome = LockedValue<Swift.Result<Result, any Error>?>(nil)
    await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
        let thread = Thread {
            outcome.withLock { $0 = Swift.Result { try body() } }
            done.resume()
        }
        thread.name = name
        thread.start()
    }
    return try outcome.withLock { $0! }.get()
}

/// ``onOwnThread(name:_:)`` for a body that does not throw.
public func onOwnThread<Result: Sendable>(
    name: String = "test.blocking",
    _ body: @escaping @Sendable () -> Result
) async -> Result {
    let outcome = LockedValue<Result?>(nil)
    await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
        let thread = Thread {
            outcome.withLock { $0 = body() }
            done.resume()
        }
        thread.name = name
        thread.start()
    }
    return outcome.withLock { $0! }
}
