// The allocation guard's probe for SchedulingNIO (`make test-allocations`, trait NIO): mallocs and
// frees per operation on EventLoopScheduler's hot paths, on a NIOPosix event loop (a one-thread
// MultiThreadedEventLoopGroup), by thread — the probe's, the loop's, the others — in the format
// `scripts/check-allocations.py` compares with the section [AllocationProbeNIO] of
// `Tests/AllocationLimits/limits.txt` (whose header says how the guard works). The paths are
// AllocationProbe's (Tests/AllocationPaths) on this scheduler, plus its own: the isolated view's
// calls (`assumeIsolated()`) and a one-shot timer's fire. Built in release, as users run it.
//
//     AllocationProbeNIO     every path, one line each; exit 1 if a self-check failed
//
// Under a sanitizer the interposer is compiled out: the probe prints "skipped" and exits 0. Built
// without the trait NIO it has nothing to measure: it says so and exits 1.

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

#if NIO
import AllocationCounting
import AllocationPaths
import NIOCore
import NIOPosix
import Scheduling
import SchedulingNIO

guard let report = AllocationReport.start(probe: "AllocationProbeNIO") else { exit(0) }

let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
let scheduler = group.next().scheduler
let target = ProbeTarget(name: "nio", place: "loop", scheduler, countsLoopThread: true)
target.registerLoopThread()
// One timer pending throughout, two hours out, as on a server (see AllocationProbe's main.swift).
let keeper = scheduler.schedule(after: .seconds(7_200)) {}
timerPaths(target, report)
isolatedPaths(scheduler, target, report)
firePaths(target, report)
asyncPaths(target, report)
keeper.dispose()
AllocationCounter.clear(AllocationCounter.loopSlot)
do {
    try group.syncShutdownGracefully()
} catch {
    report.fail("MultiThreadedEventLoopGroup.syncShutdownGracefully() threw \(error)")
}
report.finish()
#else
print("AllocationProbeNIO: built without the trait NIO, so it measures nothing: build it with --traits NIO")
exit(1)
#endif
