import Scheduling
@_spi(Workloads) import SchedulingWorkloads
import Synchronization
import Testing

@Suite("raceWithSleep")
struct RaceWithSleepTests {
    @Test("the operation's value when it finishes first")
    func operationWins() async throws {
        let value = try await raceWithSleep(.seconds(30)) { 7 }
        #expect(value == 7)
    }

    @Test("the operation's error when it throws first")
    func operationThrows() async {
        struct Failure: Error, Equatable {}
        await #expect(throws: Failure()) {
            try await raceWithSleep(.seconds(30)) { () async throws -> Int in throw Failure() }
        }
    }

    @Test("TimeoutError when the sleep ends first; the operation is cancelled and awaited")
    func sleepWins() async {
        let sawCancellation = Atomic<Bool>(false)
        await #expect(throws: TimeoutError(timeout: .milliseconds(1))) {
            try await raceWithSleep(.milliseconds(1)) { () async throws -> Int in
                do {
                    try await Task.sleep(for: .seconds(3600))
                } catch is CancellationError {
                    sawCancellation.store(true, ordering: .relaxed)
                    throw CancellationError()
                }
                return 1
            }
        }
        // The group awaited the cancelled operation before the call returned.
        let cancelled = sawCancellation.load(ordering: .relaxed)
        #expect(cancelled)
    }
}
