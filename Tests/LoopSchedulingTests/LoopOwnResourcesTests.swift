import Foundation
import LoopSchedulingTestSupport
import Scheduling
import Testing

@testable import LoopEngine
@testable import LoopScheduling

#if canImport(Glibc)
import Glibc
#endif

/// A scheduler touches only what it made (issue 14): no Dispatch queue until a job falls back, and
/// an adopted loop that knows its thread from `init(adopting:)` on.
@Suite("LoopScheduler's own resources")
struct LoopOwnResourcesTests {
    @Test("A scheduler that never refused a job never makes its fallback queue, and asking about isolation makes none")
    func fallbackIsMadeOnlyWhenAJobFallsBack() async throws {
        let loop = try LoopScheduler(name: "no-dispatch")
        #expect(loop.isIsolatingCurrentContext() == false)
        await Task(executorPreference: loop) { #expect(loop.isIsolatingCurrentContext() == true) }.value
        await loop.shutdown()
        #expect(loop.isIsolatingCurrentContext() == false)
        #expect(!loop.core.fallback.hasQueue, "the fallback queue was made although no job fell back")
        // The first job after the loop closed makes it, and runs there isolated to the loop.
        let isolated = await Task(executorPreference: loop) { loop.isIsolatingCurrentContext() == true }.value
        #expect(isolated)
        #expect(loop.core.fallback.hasQueue)
    }

}
