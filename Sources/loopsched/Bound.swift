#if CommandLineTool
import ArgumentParser
import Scheduling
@_spi(Workloads) import SchedulingWorkloads

/// `loopsched bound`: the cancel-heavy timer workloads (`timers-cancel`, `timeouts-churn`) on a
/// system with no timer store (``NullStoreSystem``), with `bench`'s harness, orders and seeds. The
/// result is the floor of this harness for any scheduler whose schedule call returns an
/// `any Disposable` entry: what a store adds is the difference to `bench`'s figures. At millions
/// pending in random order it is memory-bound (a cold handle and a cold entry per operation).
struct Bound: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Runs timers-cancel, timeouts-churn and rearm with no timer store: the harness's own cost."
    )

    @Option(help: "Pending timers (repeatable).")
    var n: [Int] = [1_000_000]

    @Option(help: "Seed of timers-cancel's random order, as bench's.")
    var seed: UInt64 = 1

    mutating func validate() throws {
        if n.contains(where: { $0 < 1 }) { throw ValidationError("--n must be at least 1") }
    }

    func run() throws {
        let system = NullStoreSystem()
        let fired = Tally()
        let harness = TimerHarness.loopsched.countingStrayFires(in: fired)
        print("workload        n           metric            no store")
        for size in n {
            for (label, order) in Workload.cancelOrders(size, seed: seed) {
                let run = Workloads.timersCancel(system, order: order, harness: harness)
                row("timers-cancel", size, "ns/pair \(label)", run.nanosecondsPerPair)
            }
            for random in [false, true] {
                let run = Workloads.timeoutsChurn(
                    system,
                    pending: size,
                    random: random,
                    generator: Workload.churnGenerator,
                    harness: harness
                )
                row("timeouts-churn", size, random ? "ns/op random" : "ns/op fifo", run.nanosecondsPerOperation)
            }
        }
        for size in n {
            for random in [false, true] {
                var generator = Workload.churnGenerator
                let run = Workloads.rearm(pending: size, random: random, generator: &generator) {
                    NullStoreSystem.RearmableEntry(deadline: Measure.now() &+ 30_000_000_000) { fired.add() }
                }
                row("rearm", size, random ? "ns/op random" : "ns/op fifo", run.nanosecondsPerOperation)
            }
        }
        if fired.count > 0 { throw ValidationError("\(fired.count) cancelled timers ran") }
    }

    private func row(_ workload: String, _ n: Int, _ metric: String, _ value: Double) {
        let columns = [
            workload.padding(toLength: 16, withPad: " ", startingAt: 0),
            String(n).padding(toLength: 12, withPad: " ", startingAt: 0),
            metric.padding(toLength: 18, withPad: " ", startingAt: 0),
            String(Int(value.rounded())),
        ]
        print(columns.joined())
    }
}
#endif
