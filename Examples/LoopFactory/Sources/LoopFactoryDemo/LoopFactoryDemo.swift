// Runs plain Swift concurrency on LoopExecutorFactory's loops and checks where each piece ran:
// exits 0 when every check holds, 1 (naming the failed checks) otherwise. With the argument
// `bench`, runs FactoryBench's workloads instead (scripts/bench-factory.sh).
import Dispatch
import FactoryBench
import Foundation
import LoopScheduling
import Scheduling

/// Whether the caller runs on one of `loops`, as their current scheduler.
func isOnDefaultLoop(_ loops: [LoopScheduler]) -> Bool {
    guard let current = Schedulers.current else { return false }
    return loops.contains { $0 === current }
}

@main
struct LoopFactoryDemo {
    typealias DefaultExecutorFactory = LoopExecutorFactory

    static func main() async throws {
        guard LoopExecutorFactory.isInEffect, let mainLoop = LoopExecutorFactory.mainLoop else {
            print("LoopExecutorFactory is not in effect: compile with -Xfrontend -disable-availability-checking")
            exit(1)
        }
        if CommandLine.arguments.dropFirst().first == "bench" {
            try await FactoryBench.run()
            return
        }
        let loops = LoopExecutorFactory.defaultLoops
        var failed: [String] = []
        func check(_ holds: Bool, _ what: String) {
            print(holds ? "ok    \(what)" : "FAIL  \(what)")
            if !holds { failed.append(what) }
        }

        // A task with no isolation runs on a default loop, with that loop as the current scheduler
        // (`main` is main-actor code: a `Task {}` started here would inherit the main actor).
        let onLoop = await Task.detached { isOnDefaultLoop(loops) }.value
        check(onLoop, "a Task.detached {} runs on a default loop, Schedulers.current is that loop")
        let nested = await Task.detached { await Task { isOnDefaultLoop(loops) }.value }.value
        check(nested, "a Task {} started by such a task runs on a default loop too")

        // Its sleeps are the loops' timers.
        let firedBefore = loops.reduce(0) { $0 + $1.statistics.timersFired }
        let sleeps = 20
        try await Task {
            for _ in 0..<sleeps { try await Task.sleep(for: .milliseconds(1)) }
        }.value
        // Statistics lag the loop by a batch: look again for up to 10 s.
        var fired = 0
        for _ in 0..<10_000 {
            fired = loops.reduce(0) { $0 + $1.statistics.timersFired } - firedBefore
            if fired >= sleeps { break }
            try await Task.sleep(for: .milliseconds(1))
        }
        check(fired >= sleeps, "\(sleeps) Task.sleep calls fired by the default loops (timersFired +\(fired))")

        // A deadline that passed before the sleep reached the loop: it returns at once, no crash.
        let passed = await Task.detached { () async -> Bool in
            do {
                try await Task.sleep(until: .now - .seconds(1), clock: .continuous)
                try await Task.sleep(until: .now - .seconds(1), clock: .suspending)
                try await Task.sleep(for: .zero)
                return true
            } catch {
                return false
            }
        }.value
        check(passed, "sleeps until deadlines already passed return, without an error")

        // Main-actor code runs on the main loop.
        let onMain = await MainActor.run { Schedulers.current === mainLoop }
        check(onMain, "main-actor code runs on the main loop")

        // Dispatch's main queue and Schedulers.main are drained by the main loop.
        let dispatchMain: Bool = await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                DispatchQueue.main.async { continuation.resume(returning: Thread.isMainThread) }
            }
        }
        check(dispatchMain, "DispatchQueue.main.async runs, on the main thread")
        let schedulersMain: Bool = await withCheckedContinuation { continuation in
            _ = Schedulers.main.schedule {
                continuation.resume(returning: Schedulers.current === Schedulers.main && Thread.isMainThread)
            }
        }
        check(schedulersMain, "Schedulers.main.schedule runs, on the main thread, as the current scheduler")

        if !failed.isEmpty {
            print("\(failed.count) check(s) failed")
            exit(1)
        }
        // A sleep still pending on a loop does not keep the program alive: it exits when `main`
        // returns, as under Dispatch.
        Task.detached { try? await Task.sleep(for: .seconds(60)) }
        print("all checks passed")
    }
}
