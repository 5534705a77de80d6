import Foundation
import LoopScheduling
import Scheduling
import Synchronization

let loop = try LoopScheduler(name: "smoke")
let done = DispatchSemaphore(value: 0)
let count = Atomic<Int>(0)
for i in 0..<5 { loop.schedule { count.add(1, ordering: .relaxed); if i == 4 { done.signal() } } }
done.wait()
let t0 = Nanoseconds.monotonicNow()
loop.schedule(after: .milliseconds(20)) { let late = Nanoseconds.monotonicNow() - t0; print("timer after", late, "current ok:", loop.isCurrent); done.signal() }
done.wait()
let d = loop.schedule(after: .seconds(30)) { print("never") }
d.dispose()
var ticks = 0
let p = loop.schedule(after: .zero, repeatingEvery: .milliseconds(10), leeway: .zero, countingMissedTicks: { m in print("tick missed", m) ; done.signal() })
done.wait(); done.wait(); done.wait(); p.dispose()
loop.schedule(at: Date().addingTimeInterval(0.05)) { print("wall fired"); done.signal() }
done.wait()
print(loop.statistics)
loop.shutdown()
print("shutdown ok", count.load(ordering: .relaxed))
try LoopScheduler.run(name: "runner") { l in
    l.schedule(after: .milliseconds(5)) { print("in run mode, current:", l.isCurrent); l.shutdown() }
}
print("run returned")
