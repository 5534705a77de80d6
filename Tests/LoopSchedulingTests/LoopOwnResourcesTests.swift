import Foundation
import LoopSchedulingTestSupport
import Scheduling
import Testing

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

    @Test("An adopted loop run on a thread other than the one that adopted it stops the program, naming the rule")
    func adoptedOnAnotherThread() async {
        let result = await ExitTests.serially {
            await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                startWatchdog(seconds: 60)
                guard let raw = HostUVLoop.make() else { fatalError("uv_loop_init failed") }
                let address = Int(bitPattern: raw)
                // Adopted here, run below by another thread.
                let scheduler = try! LoopScheduler(adopting: raw)
                scheduler.schedule {}
                let host = Thread { HostUVLoop.run(UnsafeMutableRawPointer(bitPattern: address)!) }
                host.start()
                Glibc.sleep(60)  // the loop's first callback stops the process first
            }
        }
        if let result {
            let output = String(decoding: result.standardErrorContent, as: UTF8.self)
            #expect(
                output.contains("the loop runs on a thread other than the one that adopted it"),
                "\(output.suffix(2000))"
            )
        }
    }
}
