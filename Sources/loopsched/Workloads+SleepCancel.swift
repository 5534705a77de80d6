#if CommandLineTool
import Foundation
import LoopScheduling
import Scheduling

/// `sleep-cancel`: the "sleep that is almost always cancelled" pattern (a retry back-off, an idle
/// timeout). What matters is the cost of the pair and that a cancelled sleep gives its memory back
/// at once rather than at its deadline.
extension AsyncWorkload {
    static func sleepCancel(on system: AsyncSystem, _ n: Int, driver: TimerDriverKind) throws -> Sample {
        let duration = Duration.seconds(30)
        switch system {
        case .loop:
            let loop = try makeLoop(driver)
            defer { loop.shutdown() }
            return sleepers(
                n,
                sleep: { try await loop.sleep(for: duration) },
                settle: { AsyncBridge.roundTrip(loop) },
                iterations: { loop.statistics.loopIterations }
            )
        case .queue:
            let queue = makeQueue()
            return sleepers(
                n,
                sleep: { try await queue.sleep(for: duration) },
                settle: { AsyncBridge.roundTrip(queue) }
            )
        case .taskSleep:
            return sleepers(n, sleep: { try await Task.sleep(for: duration) }, settle: {})
        case .continuousClock:
            return sleepers(n, sleep: { try await ContinuousClock().sleep(for: duration) }, settle: {})
        default:
            preconditionFailure("sleep-cancel does not run on \(system.displayName)")
        }
    }

    /// `n` pool tasks each sleeping, then all cancelled. The time is that of starting them plus
    /// that of cancelling them until every one ended; the pause between, while they sleep, is not
    /// counted in the time but is in the CPU (which is idle then). `iterations` reads a loop's
    /// iteration count: how often starting and cancelling woke it, per thousand pairs (the pause
    /// between and the settling round trip not counted).
    private static func sleepers(
        _ n: Int,
        sleep: @escaping @Sendable () async throws -> Void,
        settle: () -> Void,
        iterations: (() -> Int)? = nil
    ) -> Sample {
        var sample = Sample()
        let iterationsAtStart = iterations?() ?? 0
        let started = Countdown(n)
        let ended = Countdown(n)
        let woke = Tally()
        let baseline = Measure.heapBytesInUse()
        let cpu = Measure.processCPUSeconds()
        let start = Measure.now()
        var tasks: [Task<Void, Never>] = []
        tasks.reserveCapacity(n)
        for _ in 0..<n {
            tasks.append(
                Task.detached {
                    started.tick()
                    do {
                        try await sleep()
                        woke.add()
                    } catch {}
                    ended.tick()
                }
            )
        }
        guard started.wait(timeout: .seconds(120)) else {
            sample.failures.append("\(started.left) of \(n) tasks never started")
            return sample
        }
        let startPhase = started.finishedAt.load(ordering: .acquiring) - start
        var loopIterations = (iterations?() ?? 0) - iterationsAtStart
        // A task counted as started may still be on its way into the sleep: let the last few arrive,
        // so that every cancellation finds a pending timer.
        Thread.sleep(forTimeInterval: 0.05)
        let cancelStart = Measure.now()
        let iterationsBeforeCancel = iterations?() ?? 0
        for task in tasks { task.cancel() }
        guard ended.wait(timeout: .seconds(120)) else {
            sample.failures.append("\(ended.left) of \(n) cancelled sleeps never ended")
            return sample
        }
        let cancelPhase = ended.finishedAt.load(ordering: .acquiring) - cancelStart
        if let iterations {
            loopIterations += iterations() - iterationsBeforeCancel
            sample.metrics["loop iter/1k"] = Double(loopIterations) * 1_000 / Double(n)
        }
        tasks.removeAll()
        settle()
        let held = Measure.heapBytesInUse() - baseline
        sample.metrics["ns/pair"] = Double(startPhase + cancelPhase) / Double(n)
        sample.metrics["cpu ns/pair"] = (Measure.processCPUSeconds() - cpu) * 1e9 / Double(n)
        sample.metrics["held MB after"] = Double(max(0, held)) / 1e6
        let wokeCount = woke.count
        if wokeCount > 0 { sample.failures.append("\(wokeCount) cancelled sleeps returned normally") }
        return sample
    }
}
#endif
