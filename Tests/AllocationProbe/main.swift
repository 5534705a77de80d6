// The allocation guard's probe for this package's schedulers (`make test-allocations`): mallocs
// and frees per operation on LoopScheduler's, QueueScheduler's and TestScheduler's hot paths, by
// thread, printed in the format `scripts/check-allocations.py` compares with
// `Tests/AllocationLimits/limits.txt` (whose header says how the guard works and how another
// product adds a probe). Built in release, as users run it; linked with the malloc interposer
// (`CAllocationCounter`), which only this executable links.
//
//     AllocationProbe     every path, one line each; exit 1 if a self-check failed
//
// Under a sanitizer the interposer is compiled out: the probe prints "skipped" and exits 0.

import AllocationCounting
import AllocationPaths
import LoopScheduling
import Scheduling

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

guard let report = AllocationReport.start(probe: "AllocationProbe") else { exit(0) }

/// Every path of `target`, with one timer pending throughout, two hours out, as on a server: a
/// store that empties gives its memory back once the loop is quiet and allocates it again for
/// the next timer, a cost of going idle rather than of the operations measured.
func allPaths(_ target: ProbeTarget) {
    let keeper = target.scheduler.schedule(after: .seconds(7_200)) {}
    timerPaths(target, report)
    asyncPaths(target, report)
    keeper.dispose()
}

do {
    let loop = try LoopScheduler(name: "alloc-probe")
    let target = ProbeTarget(loop: loop)
    target.registerLoopThread()
    allPaths(target)
    AllocationCounter.clear(AllocationCounter.loopSlot)
    loop.syncShutdown()
} catch {
    report.fail("LoopScheduler(name:) threw \(error)")
}

allPaths(ProbeTarget(queue: QueueScheduler(name: "alloc-probe")))

testSchedulerPath(report)
report.finish()
