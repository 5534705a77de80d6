import Foundation

/// Exit tests (`#expect(processExitsWith:)`) one at a time across the whole test process.
///
/// An exit test's parent waits for its child; two children that hang at once stalled every other
/// `async` test of the process for as long (the pool has one thread per core). Run each exit test
/// through ``serially(_:)``, and start ``startWatchdog(seconds:)`` first thing in the child, so a
/// hung child costs the rest at most one waiting exit test for a bounded time.
public enum ExitTests {
    private static let gate = Gate()

    /// Runs `body` when no other exit test of the process runs, suspending (never blocking) until then.
    public static func serially<Result>(_ body: () async throws -> Result) async rethrows -> Result {
        await gate.enter()
        do {
            let result = try await body()
            await gate.leave()
            return result
        } catch {
            await gate.leave()
            throw error
        }
    }

    /// A lock for tasks: the next waiter enters when the holder leaves, in arrival order.
    private actor Gate {
        private var held = false
        private var waiting: [CheckedContinuation<Void, Never>] = []

        func enter() async {
            guard held else {
                held = true
                return
            }
            await withCheckedContinuation { waiting.append($0) }
        }

        func leave() {
            if waiting.isEmpty { held = false } else { waiting.removeFirst().resume() }
        }
    }
}

/// In an exit test's child: ends the child with exit status 3 and a message on standard error if it
/// still runs after `seconds`, so a hang fails the test (the status or the message the test checks)
/// instead of stalling the run.
public func startWatchdog(seconds: Int = 60) {
    let thread = Thread {
        Thread.sleep(forTimeInterval: TimeInterval(seconds))
        FileHandle.standardError.write(Data("FAILED: watchdog: still running after \(seconds) s (a hang)\n".utf8))
        exit(3)
    }
    thread.start()
}
