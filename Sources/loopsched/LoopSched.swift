#if CommandLineTool
import ArgumentParser

@main
struct LoopSched: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "loopsched",
        abstract: "Runs timer-heavy workloads on LoopScheduler and the Dispatch schedulers side by side, "
            + "and cross-checks their behaviour.",
        subcommands: [Bench.self, Crosscheck.self, Bound.self, LostTimer.self],
        defaultSubcommand: Bench.self
    )
}
#endif
