#if CommandLineTool
import ArgumentParser
import Dispatch
import Foundation
import LoopScheduling
import Scheduling

/// `loopsched lost-timer`: the reproduction of issue 26, round after round. A far timer, a
/// periodic timer due in 1 ms with two hours of leeway, a pause until it is due, then a zero-delay
/// action: the action must run, and the periodic timer must tick (with it at the latest). Before
/// the fix the Dispatch timer queue counted its old arming (the far timer's) as serving the
/// zero-delay action, which then never ran.
struct LostTimer: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "lost-timer",
        abstract: "Repeats the lost-timer reproduction (a leeway'd periodic timer sharing a far timer's "
            + "wake-up, then a zero-delay action) and counts lost actions and missing ticks."
    )

    enum Kind: String, ExpressibleByArgument, CaseIterable {
        case queue, concurrent, loop
    }

    @Option(help: "Rounds per scheduler.")
    var rounds = 5

    @Option(help: "Schedulers (repeatable): queue, concurrent, loop.")
    var scheduler: [Kind] = Kind.allCases

    @Flag(help: "The far timer at a saturated Duration (.seconds(Int64.max)) instead of one hour.")
    var saturated = false

    @Option(help: "The pause, in microseconds, between scheduling the periodic timer (due in 1 ms) and the zero-delay action.")
    var pauseMicros = 5_000

    mutating func validate() throws {
        if rounds < 1 { throw ValidationError("--rounds must be at least 1") }
        if pauseMicros < 1_000 { throw ValidationError("--pause-micros must be at least 1000: the periodic timer is due in 1 ms") }
    }

    func run() throws {
        let far: Duration = saturated ? .seconds(Int64.max) : .seconds(3600)
        var failed = false
        for kind in scheduler {
            let start = Nanoseconds.monotonicNow()
            var lost = 0
            var missingTicks = 0
            for _ in 0..<rounds {
                let (actionRan, ticked) = try round(kind, far: far)
                if !actionRan { lost += 1 }
                if !ticked { missingTicks += 1 }
            }
            let seconds = Double(Nanoseconds.monotonicNow() - start) / 1e9
            print(
                "\(kind.rawValue): \(rounds) rounds, far timer \(saturated ? "saturated" : "1 h"): "
                    + "lost \(lost) zero-delay actions, \(missingTicks) rounds without a tick "
                    + "(\(String(format: "%.1f", seconds)) s)"
            )
            if lost > 0 || missingTicks > 0 { failed = true }
        }
        if failed { throw ExitCode(1) }
    }

    /// One round on a new scheduler: whether the zero-delay action ran and the periodic timer ticked,
    /// each within two seconds.
    private func round(_ kind: Kind, far: Duration) throws -> (actionRan: Bool, ticked: Bool) {
        let loop: LoopScheduler?
        let scheduler: any DateScheduler
        switch kind {
        case .queue:
            loop = nil
            scheduler = QueueScheduler(name: "lost-timer", priority: .default)
        case .concurrent:
            loop = nil
            scheduler = ConcurrentQueueScheduler(name: "lost-timer", priority: .default)
        case .loop:
            let made = try LoopScheduler(name: "lost-timer")
            loop = made
            scheduler = made
        }
        defer { loop?.syncShutdown() }
        let tick = DispatchSemaphore(value: 0)
        let farTimer = scheduler.schedule(after: far) {}
        let periodic = scheduler.schedule(
            after: .milliseconds(1),
            repeatingEvery: .seconds(3600),
            leeway: .seconds(7200)
        ) { tick.signal() }
        usleep(UInt32(pauseMicros))
        let action = DispatchSemaphore(value: 0)
        scheduler.schedule(after: .zero) { action.signal() }
        let actionRan = action.wait(timeout: .now() + .seconds(2)) == .success
        let ticked = tick.wait(timeout: .now() + .seconds(actionRan ? 2 : 0)) == .success
        periodic.dispose()
        farTimer.dispose()
        return (actionRan, ticked)
    }
}
#endif
