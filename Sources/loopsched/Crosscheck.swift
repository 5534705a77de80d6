#if CommandLineTool
import ArgumentParser
import Foundation
import Scheduling

struct Crosscheck: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Runs random scripts on LoopScheduler, QueueScheduler and TestScheduler and checks each "
            + "against the behaviour contract and against the others.",
        discussion: "Exits with status 1 after printing each violation with its rule, its scheduler, a minimal "
            + "script that reproduces it and the seed."
    )

    @Option(help: "The first seed; script i uses seed + i.")
    var seed: UInt64 = 1

    @Option(help: "How many scripts to run.")
    var scripts = 100

    @Flag(help: "Print every script as it runs.")
    var verbose = false

    func run() throws {
        var failed = false
        for index in 0..<scripts {
            let scriptSeed = seed &+ UInt64(index)
            let script = Script.generate(seed: scriptSeed)
            if verbose { print("seed \(scriptSeed):\n\(script.description)") }
            let results = LockedValue<[CheckedScheduler: Result<Trace, any Error>]>([:])
            // The three schedulers run the script at the same time: they share nothing.
            DispatchQueue.concurrentPerform(iterations: CheckedScheduler.allCases.count) { kindIndex in
                let kind = CheckedScheduler.allCases[kindIndex]
                let result = Result { try ScriptRunner(kind: kind).run(script) }
                results.withLock { $0[kind] = result }
            }
            let traces = try results.withLock { $0 }.mapValues { try $0.get() }
            var violations = CheckedScheduler.allCases.flatMap { kind in
                RuleChecker(script: script, trace: traces[kind]!, scheduler: kind).violations()
            }
            violations += crossViolations(script, traces)
            guard !violations.isEmpty else { continue }
            failed = true
            for violation in violations {
                let minimal = shrink(script, keeping: violation)
                print(
                    """
                    VIOLATION of rule \(violation.rule) on \(violation.scheduler): \(violation.detail)
                    seed: \(scriptSeed) (reproduce: loopsched crosscheck --seed \(scriptSeed) --scripts 1)
                    minimal script:
                    \(minimal.description)

                    """
                )
            }
        }
        if failed { throw ExitCode(1) }
        print(
            "crosscheck: \(scripts) scripts from seed \(seed) on \(CheckedScheduler.allCases.map(\.rawValue).joined(separator: ", ")): no violation"
        )
    }

    /// Drops ops one at a time while the same rule still breaks on the same scheduler.
    private func shrink(_ script: Script, keeping violation: Violation) -> Script {
        let kinds =
            violation.scheduler == "all"
            ? CheckedScheduler.allCases : CheckedScheduler.allCases.filter { $0.rawValue == violation.scheduler }
        func stillBreaks(_ candidate: Script) -> Bool {
            var traces: [CheckedScheduler: Trace] = [:]
            for kind in CheckedScheduler.allCases { traces[kind] = try? ScriptRunner(kind: kind).run(candidate) }
            let found =
                kinds.flatMap { kind in
                    traces[kind].map { RuleChecker(script: candidate, trace: $0, scheduler: kind).violations() } ?? []
                } + crossViolations(candidate, traces.compactMapValues { $0 })
            return found.contains { $0.rule == violation.rule }
        }
        var current = script
        var index = 0
        while index < current.ops.count && current.ops.count > 1 {
            var candidate = current
            candidate.ops.remove(at: index)
            if stillBreaks(candidate) { current = candidate } else { index += 1 }
        }
        return current
    }
}
#endif
