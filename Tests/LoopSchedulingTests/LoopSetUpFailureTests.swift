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

/// Set-up failures (issue 7, defects 1 and 2): every step of a LoopScheduler's set-up can fail,
/// and each failure throws ``LoopSchedulerError`` naming the call and releases exactly what was
/// acquired — no crash, no hang, no fd or thread left. Each test runs in a child process, where
/// the counts of open fds and threads are the process's alone, under a watchdog that turns a hang
/// into a failure.
@Suite("LoopScheduler set-up failures")
struct LoopSetUpFailureTests {
    @Test("A failure at any set-up step throws the call's error and leaks no fd or thread (own thread)")
    func everyStepOwnThread() async {
        let result = await ExitTests.serially { await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            startWatchdog()
            for driver in [TimerDriverKind.timerfd, .uvTimer] {
                // Warm up: one full start and shutdown, so lazily made process-wide resources (the
                // pthread keys, Dispatch's threads) are in the baseline.
                await (try! LoopScheduler(name: "warm", clock: SystemClock(), driver: driver)).shutdown()
                let baseline = ResourceCounts.afterDispatchIsUp()
                for step in LoopSetUpStep.allCases where step.applies(to: driver, mode: .ownThread) {
                    do {
                        _ = try LoopScheduler(
                            name: "fail",
                            clock: SystemClock(),
                            driver: driver,
                            faults: LoopSetUpFaults(failing: step)
                        )
                        fail("\(step): set-up succeeded although it was made to fail")
                    } catch let error as LoopSchedulerError {
                        check(error.description.contains(step.rawValue), "\(step): the error names another call: \(error)")
                    } catch {
                        fail("\(step): not a LoopSchedulerError: \(error)")
                    }
                    check(settles(to: baseline), "\(step): \(ResourceCounts.now()) after failing, \(baseline) before")
                }
                // And the loop still works after all that.
                let loop = try! LoopScheduler(name: "after", clock: SystemClock(), driver: driver)
                let ran = DispatchSemaphore(value: 0)
                loop.schedule { ran.signal() }
                check(ran.wait(timeout: .now() + 20) == .success, "a loop made after the failures does not run")
                await loop.shutdown()
            }
            exit(0)
        } }
        reportChildErrors(result)
    }

    @Test("A failure at any set-up step of an adopted loop throws and closes what it opened on the host's loop")
    func everyStepAdopted() async {
        let result = await ExitTests.serially { await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            startWatchdog()
            _ = try! LoopScheduler(name: "warm", clock: SystemClock(), driver: .timerfd)
            let (warmHost, warm) = try! await HostLoop.start(name: "warm-host") { try LoopScheduler(adopting: $0) }
            await warm.shutdown()
            check(warmHost.waitUntilFinished() == 0, "the warm-up host loop did not close")
            let baseline = ResourceCounts.afterDispatchIsUp()
            for step in LoopSetUpStep.allCases where step.applies(to: .preferred, mode: .adopted) {
                // The host creates the scheduler before running its loop, as hosts do; the loop then
                // runs the close callbacks of what the failed set-up opened, and ends.
                let (host, outcome) = try! await HostLoop.start(name: "host") { loop -> String in
                    do {
                        _ = try LoopScheduler(
                            name: "adopted",
                            mode: .adopted,
                            adopting: loop,
                            clock: SystemClock(),
                            driver: .preferred,
                            faults: LoopSetUpFaults(failing: step)
                        )
                        return "succeeded"
                    } catch {
                        return "\(error)"
                    }
                }
                check(outcome.contains(step.rawValue), "\(step): \(outcome)")
                check(host.waitUntilFinished() == 0, "\(step): uv_loop_close on the host's loop failed: a handle was left open")
                check(settles(to: baseline), "\(step): \(ResourceCounts.now()) after failing, \(baseline) before")
            }
            exit(0)
        } }
        reportChildErrors(result)
    }

    @Test("When the thread cannot be started, init throws at once instead of hanging, and leaks nothing")
    func threadLimit() async {
        let result = await ExitTests.serially { await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            startWatchdog()
            await (try! LoopScheduler(name: "warm")).shutdown()
            let baseline = ResourceCounts.afterDispatchIsUp()
            for _ in 0..<3 {
                do {
                    _ = try LoopScheduler(name: "nothread", clock: SystemClock(), faults: LoopSetUpFaults(failing: .thread))
                    fail("the thread step was made to fail but init succeeded")
                } catch {
                    check("\(error)".contains("pthread_create"), "the error does not name pthread_create: \(error)")
                }
            }
            check(settles(to: baseline), "\(ResourceCounts.now()) after failing, \(baseline) before")
            exit(0)
        } }
        reportChildErrors(result)
    }

    @Test("Under a real RLIMIT_NOFILE, starting loops and groups fails cleanly at every fd budget")
    func realDescriptorLimit() async {
        let result = await ExitTests.serially { await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            startWatchdog()
            await (try! LoopScheduler(name: "warm")).shutdown()
            await (try! LoopSchedulerGroup(count: 1)).shutdown()
            let baseline = ResourceCounts.afterDispatchIsUp()
            var limit = rlimit()
            getrlimit(RLIMIT_NOFILE_VALUE, &limit)
            let original = limit
            var failures = 0
            var successes = 0
            // Each loop needs a few fds (epoll, eventfd, two timerfds); try every budget around it.
            for spare in 0..<40 {
                limit.rlim_cur = rlim_t(baseline.fds + spare)
                check(setrlimit(RLIMIT_NOFILE_VALUE, &limit) == 0, "setrlimit failed: errno \(errno)")
                do {
                    let group = try LoopSchedulerGroup(count: 3, name: "limited")
                    successes += 1
                    await group.shutdown()
                } catch is LoopSchedulerError {
                    failures += 1
                } catch {
                    fail("not a LoopSchedulerError: \(error)")
                }
                var restored = original
                setrlimit(RLIMIT_NOFILE_VALUE, &restored)
                check(settles(to: baseline), "budget \(spare): \(ResourceCounts.now()) afterwards, \(baseline) before")
            }
            check(failures > 0, "no budget was small enough to fail: the test tests nothing")
            check(successes > 0, "no budget was large enough for three loops")
            exit(0)
        } }
        reportChildErrors(result)
    }
}

/// Shows what a failed child process said.
func reportChildErrors(_ result: ExitTest.Result?) {
    guard let result, result.exitStatus != .exitCode(0) else { return }
    let output = String(decoding: result.standardErrorContent, as: UTF8.self)
    Issue.record("child process said: \(output.suffix(2000))")
}

/// Open fds and threads of this process.
struct ResourceCounts: Equatable, CustomStringConvertible {
    var fds: Int
    var threads: Int

    static func now() -> ResourceCounts {
        let fds = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? -1
        let threads = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task").count) ?? -1
        // Listing /proc/self/fd opens one fd of its own.
        return ResourceCounts(fds: fds - 1, threads: threads)
    }

    var description: String { "\(fds) fds, \(threads) threads" }
}

extension ResourceCounts {
    /// The counts once libdispatch's own process-wide state exists. In an exit test's child,
    /// Dispatch already runs, but sets up its timer manager (an epoll, an eventfd, a timerfd)
    /// lazily, at its first timer, which the test runtime may start after a baseline taken too
    /// early (seen once under load): a timer fired here first puts those in the baseline. (What a
    /// scheduler costs a process that never touched Dispatch is `LoopProcessLimitTests`' part.)
    static func afterDispatchIsUp() -> ResourceCounts {
        let fired = DispatchSemaphore(value: 0)
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(1)) { fired.signal() }
        fired.wait()
        return now()
    }
}

/// Whether the counts come back to `baseline` (or below: Dispatch may retire an idle worker)
/// within a few seconds: a thread that was joined is gone at once, but the kernel may list an
/// exiting detached one briefly.
func settles(to baseline: ResourceCounts) -> Bool {
    let deadline = Nanoseconds.monotonicNow() + 5_000_000_000
    while Nanoseconds.monotonicNow() < deadline {
        let now = ResourceCounts.now()
        if now.fds == baseline.fds && now.threads <= baseline.threads { return true }
        usleep(1_000)
    }
    return false
}

/// In a child process: print and exit non-zero.
func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("FAILED: \(message)\n".utf8))
    exit(1)
}

func check(_ condition: Bool, _ message: @autoclosure () -> String) {
    if !condition { fail(message()) }
}


let RLIMIT_NOFILE_VALUE = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)

extension LoopSetUpStep {
    /// Whether the step is taken with this driver and mode.
    func applies(to driver: TimerDriverKind, mode: LoopMode) -> Bool {
        switch self {
        case .loopInit: mode != .adopted
        case .thread: mode == .ownThread
        case .timerInit: driver == .uvTimer
        case .timerFD, .clockFD, .pollInit, .pollStart, .clockPollInit, .clockPollStart, .clockWatch:
            driver == .timerfd
        case .asyncInit, .prepareInit, .prepareStart, .idleInit: true
        }
    }
}
