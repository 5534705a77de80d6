#if NIO
import Foundation
import LoopSchedulingTestSupport
import NIOCore
import NIOPosix
import Scheduling
import SchedulingNIO
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Exit tests (a child process each, in EXIT_SUITES): a precondition, and SwiftNIO's strict mode,
/// which is process-wide (read once, from the environment).
@Suite("EventLoopScheduler crash tests")
struct EventLoopSchedulerCrashTests {
    @Test("assumeIsolated() off the loop's thread stops the program")
    func assumeIsolatedOffLoop() async {
        let result = await ExitTests.serially {
            await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                startWatchdog()
                let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
                Self.isolatedView(of: group.next().scheduler)
            }
        }
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("EventLoopScheduler.assumeIsolated(): not on the event loop's thread"))
    }

    /// `assumeIsolated()` from synchronous code, as a channel handler calls it.
    static func isolatedView(of scheduler: EventLoopScheduler) {
        _ = scheduler.assumeIsolated()
    }

    @Test("After its loop shut down, the scheduler calls nothing of SwiftNIO's (which traps under SWIFTNIO_STRICT)")
    func nothingCallsSwiftNIOAfterShutdown() async {
        _ = await ExitTests.serially {
            await #expect(processExitsWith: .success) {
                startWatchdog()
                // Read once by SwiftNIO, at its first use: set before anything of it runs.
                setenv("SWIFTNIO_STRICT", "1", 1)
                let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
                let scheduler = group.next().scheduler
                let pending = scheduler.schedule(after: .seconds(3600)) {}
                let idle = scheduler.scheduleRearmable(after: .seconds(3600)) {}
                try? await group.shutdownGracefully()
                guard pending.isDisposed, idle.isDisposed else { exit(4) }
                // From another thread and from tasks, everything the scheduler takes after its close.
                _ = scheduler.schedule {}
                _ = scheduler.schedule(after: .zero) {}
                _ = scheduler.schedule(after: .milliseconds(1), repeatingEvery: .milliseconds(1)) {}
                guard idle.rearm(after: .seconds(1)) == false else { exit(5) }
                guard (try? await scheduler.sleep(for: .milliseconds(1))) == nil else { exit(6) }
                let value = await Task(executorPreference: scheduler) { 42 }.value
                guard value == 42 else { exit(7) }
                await scheduler.shutdown()
            }
        }
    }
}
#endif
