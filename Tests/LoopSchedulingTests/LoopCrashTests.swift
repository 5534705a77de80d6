import Dispatch
import Foundation
import Scheduling
import Testing

@testable import LoopEngine
@testable import LoopScheduling
import LoopSchedulingTestSupport

#if canImport(Glibc)
import Glibc
#endif

/// The loop's preconditions, each an exit test: the program stops, with a message that names what
/// went wrong. Exit tests run apart from the rest (`make test` runs the suites named `…CrashTests`
/// and `LoopSetUpFailureTests` in a `swift test` of their own), since a test process waiting for a
/// child holds one of the pool's threads for as long.
@Suite("LoopScheduler crash tests")
struct LoopCrashTests {
    @Test("Loop-confined state reached off the loop thread stops the program in debug builds")
    func confinementIsChecked() async {
        #if DEBUG
        let result = await ExitTests.serially {
            await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                startWatchdog()
                let loop = try! LoopScheduler(name: "confined")
                _ = loop.core.timers.count
            }
        }
        if let result {
            let output = String(decoding: result.standardErrorContent, as: UTF8.self)
            #expect(output.contains("loop-confined state of 'confined' reached off its loop thread"), "\(output)")
        }
        #endif
    }

    @Test("A timer filed where it would fire after its deadline stops the program in debug builds, before the loop arms")
    func lateTimerIsChecked() async {
        #if DEBUG
        let result = await ExitTests.serially {
            await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                startWatchdog()
                let loop = try! LoopScheduler(name: "late")
                let ticker = loop.schedule(after: .seconds(3_600), repeatingEvery: .seconds(3_600)) {}
                // On the loop thread, behind the store's back: the periodic timer (which no re-arm
                // from another thread can move) is now due in a millisecond, in a bucket an hour out.
                // Each iteration, whenever it waits in the wheel: a bucket filed before the wheel's
                // clock caught up may rightly move to the heap at once, where the timer fires by its
                // live deadline and is filed again an hour out, and the store is sound once more.
                // Iterations: the store checks itself before the loop arms, every few of them.
                for _ in 0..<10_000 {
                    loop.schedule {
                        let periodic = ticker as! PeriodicLoopTimer
                        if periodic.heapIndex <= -2 {
                            periodic.deadline = loop.core.monotonicNow() + 1_000_000
                        }
                    }
                    usleep(1_000)
                }
            }
        }
        if let result {
            let output = String(decoding: result.standardErrorContent, as: UTF8.self)
            #expect(output.contains("DeadlineStore: ") && output.contains("broken invariants of its timer store") && output.contains("late"), "\(output.suffix(2000))")
        }
        #endif
    }

    @Test("An impossible lifecycle transition stops the program naming it")
    func impossibleTransition() async {
        let result = await ExitTests.serially {
            await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                startWatchdog()
                let lifecycle = LoopLifecycle()
                lifecycle.started()
                lifecycle.beginClosing()  // closing without draining first
            }
        }
        if let result {
            let output = String(decoding: result.standardErrorContent, as: UTF8.self)
            #expect(output.contains("LoopLifecycle.beginClosing: impossible transition from open (expected draining)"), "\(output)")
        }
    }

    @Test("checkIsolated off the loop stops the program naming the loop")
    func checkIsolatedCrash() async {
        let result = await ExitTests.serially {
            await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                startWatchdog()
                let loop = try! LoopScheduler(name: "elsewhere")
                loop.checkIsolated()
            }
        }
        if let result {
            let output = String(decoding: result.standardErrorContent, as: UTF8.self)
            #expect(output.contains("LoopScheduler.checkIsolated(): not running on the loop 'elsewhere'"), "\(output)")
        }
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
