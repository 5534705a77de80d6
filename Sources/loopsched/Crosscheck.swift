#if CommandLineTool
import ArgumentParser
import Foundation
import Scheduling

struct Crosscheck: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Runs random scripts on LoopScheduler, QueueScheduler, ConcurrentQueueScheduler (timer ops "
            + "only), TestScheduler and, with the trait NIO, EventLoopScheduler on a SwiftNIO event loop, and "
            + "checks each against the behaviour contract and against the others.",
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
            let traces = try Self.traces(of: script, on: CheckedScheduler.allCases).mapValues { try $0.get() }
            let violations = Self.violations(script, traces, on: CheckedScheduler.allCases)
            guard !violations.isEmpty else { continue }
            failed = true
            print("seed \(scriptSeed) (reproduce: loopsched crosscheck --seed \(scriptSeed) --scripts 1):")
            for violation in violations {
                print("  VIOLATION of rule \(violation.rule) on \(violation.scheduler): \(violation.detail)")
            }
            print("script:\n\(script.description)\n")
            // One minimal script per broken rule and scheduler (each shrink reruns the script many
            // times). A disagreement between schedulers is shrunk only when no scheduler broke a
            // rule of its own, which would explain it.
            var shrunk: [String] = []
            let ownRules = violations.contains { $0.scheduler != "all" }
            for violation in violations where !(ownRules && violation.scheduler == "all") {
                let key = "\(violation.rule) on \(violation.scheduler)"
                guard !shrunk.contains(key) else { continue }
                shrunk.append(key)
                let (minimal, op) = shrink(script, keeping: violation)
                let renumbered = violation.op.map { old in op.map { " (#\(old) above is #\($0) here)" } ?? "" } ?? ""
                print(
                    """
                    rule \(key), seed \(scriptSeed), minimal script\(renumbered):
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

    /// Runs `script` on each of `kinds` at the same time, each on a thread of its own (they share
    /// nothing; a driver mostly waits, so the threads are not Dispatch's, whose width is the
    /// number of cores).
    static func traces(
        of script: Script,
        on kinds: [CheckedScheduler]
    ) -> [CheckedScheduler: Result<Trace, any Error>] {
        let results = LockedValue<[CheckedScheduler: Result<Trace, any Error>]>([:])
        let done = DispatchGroup()
        for kind in kinds {
            done.enter()
            let thread = Thread {
                let result = Result { try ScriptRunner(kind: kind).run(script) }
                results.withLock { $0[kind] = result }
                done.leave()
            }
            thread.name = "crosscheck \(kind.rawValue)"
            thread.start()
        }
        done.wait()
        return results.withLock { $0 }
    }

    /// Every rule `traces` break, per scheduler and across them.
    static func violations(
        _ script: Script,
        _ traces: [CheckedScheduler: Trace],
        on kinds: [CheckedScheduler]
    ) -> [Violation] {
        kinds.flatMap { kind in
            traces[kind].map { RuleChecker(script: script, trace: $0, scheduler: kind).violations() } ?? []
        } + crossViolations(script, traces)
    }

    /// Drops ops one at a time, in passes, while the same rule still breaks on the same scheduler
    /// for the same op (running only that scheduler, or all of them for a disagreement). Returns
    /// the script and where the op went.
    private func shrink(_ script: Script, keeping violation: Violation) -> (Script, op: Int?) {
        let kinds =
            violation.scheduler == "all"
            ? CheckedScheduler.allCases : CheckedScheduler.allCases.filter { $0.rawValue == violation.scheduler }
        func stillBreaks(_ candidate: Script, op: Int?) -> Bool {
            let traces = Self.traces(of: candidate, on: kinds).compactMapValues { try? $0.get() }
            return Self.violations(candidate, traces, on: kinds).contains {
                $0.rule == violation.rule && $0.scheduler == violation.scheduler && $0.op == op
            }
        }
        var current = script
        var op = violation.op
        // Ops the scheduler does not run (a concurrent one's tasks) go first, untried.
        for index in current.ops.indices.reversed() where !kinds.contains(where: { $0.runs(current.ops[index]) }) {
            current.ops.remove(at: index)
            op = op.map { $0 > index ? $0 - 1 : $0 }
        }
        // Passes until one drops nothing: an op may become droppable only once a later one is gone.
        var dropped = true
        while dropped {
            dropped = false
            var index = 0
            while index < current.ops.count && current.ops.count > 1 {
                guard index != op else {
                    index += 1
                    continue
                }
                var candidate = current
                candidate.ops.remove(at: index)
                let shifted = op.map { $0 > index ? $0 - 1 : $0 }
                if stillBreaks(candidate, op: shifted) {
                    current = candidate
                    op = shifted
                    dropped = true
                } else {
                    index += 1
                }
            }
        }
        return (current, op)
    }
}
#endif
