#if CommandLineTool
import Dispatch
import Foundation
import Scheduling

/// Issues one script's ops on one scheduler from the calling thread (the driver), waits for what
/// the contract fixes, disposes what must still be pending, and returns the trace.
final class ScriptDriver {
    private let kind: CheckedScheduler
    private let scheduler: any DateScheduler
    private let recorder: Recorder
    private let otherThreads = DispatchGroup()
    /// Disposables of the ops the driver disposes at the end (``Script/disposedAtEnd(_:)``).
    private var kept: [Int: any Disposable] = [:]

    init(
        kind: CheckedScheduler,
        scheduler: any DateScheduler,
        clock: @escaping @Sendable () -> Int64,
        wall: @escaping @Sendable () -> Int64
    ) {
        self.kind = kind
        self.scheduler = scheduler
        recorder = Recorder(scheduler: scheduler, clock: clock, wall: wall)
    }

    private var clock: @Sendable () -> Int64 { recorder.clock }
    private var trace: LockedValue<Trace> { recorder.trace }

    /// Runs `script`; `pass` lets time pass (a real sleep, or an advance of virtual time).
    func drive(_ script: Script, pass: (Duration) -> Void) -> Trace {
        for (id, op) in script.ops.enumerated() where kind.runs(op) {
            if case .pause(let pause) = op {
                pass(pause)
                continue
            }
            let now = (clock(), recorder.wall())
            trace.withLock { $0.called[id] = now }
            issue(op, id, script)
            let after = (clock(), recorder.wall())
            trace.withLock { $0.returned[id] = after }
        }
        let horizon = script.horizon
        if kind.isVirtual { pass(horizon + .milliseconds(1)) }
        waitForFixedRuns(script, horizon: horizon, pass: pass)
        otherThreads.wait()
        // A little past the horizon, for anything that must not happen (a disposed timer firing
        // late).
        if kind.isVirtual { pass(horizon + .milliseconds(50)) } else { pass(.milliseconds(30)) }
        disposeKept(script)
        if !kind.isVirtual { pass(.milliseconds(10)) }
        return trace.withLock { $0 }
    }

    /// Waits until every op with a fixed outcome has run as often as it must, for at most the
    /// horizon and ``ScriptRunner/patience`` more.
    private func waitForFixedRuns(_ script: Script, horizon: Duration, pass: (Duration) -> Void) {
        let fixed = script.ops.indices.compactMap { id -> (Int, Int)? in
            guard kind.runs(script.ops[id]), let expected = script.expectedRuns(id) else { return nil }
            return (id, expected)
        }
        let patience = horizon + ScriptRunner.patience
        let deadline = DispatchTime.now() + patience.dispatchInterval
        while true {
            let missing = trace.withLock { trace in
                fixed.contains { id, expected in trace.runs.lazy.filter { $0.op == id }.count < expected }
            }
            guard missing else { return }
            if DispatchTime.now() > deadline {
                trace.withLock { $0.timedOut = patience }
                return
            }
            pass(kind.isVirtual ? .milliseconds(1) : .milliseconds(2))
        }
    }

    /// Disposes the kept ops; for those that never run (far), records whether they were still
    /// pending.
    private func disposeKept(_ script: Script) {
        for (id, disposable) in kept.sorted(by: { $0.key < $1.key }) {
            guard let reporting = disposable as? any DisposeOutcomeReporting else {
                disposable.dispose()
                continue
            }
            let neverRuns = script.ops[id].isFar && script.expectedRuns(id) == 0
            let pending = reporting.disposeReportingPending()
            let now = clock()
            trace.withLock {
                // Only a dispose that found it waiting bars later starts (see `wonDisposal`).
                if pending { $0.disposedAt[id] = now }
                if neverRuns { $0.pendingAtEnd[id] = pending }
            }
        }
    }

    // Tasks run on the global pool, except on the test scheduler: there they prefer it, so its
    // virtual time drives them (rule 12).
    private var taskExecutor: TestScheduler? { scheduler as? TestScheduler }

    /// A task that sleeps `delay` on the scheduler and records a run if the sleep returned.
    @discardableResult
    private func sleepTask(_ id: Int, _ delay: Duration) -> Task<Void, Never> {
        let recorder = recorder
        let scheduler = scheduler
        return Task(executorPreference: taskExecutor) {
            recorder.due(id, after: delay)
            do {
                try await scheduler.sleep(for: delay)
                recorder.record(id, inTask: true)
            } catch {}
        }
    }

    private func issue(_ op: Op, _ id: Int, _ script: Script) {
        let recorder = recorder
        let scheduler = scheduler
        let virtual = kind.isVirtual
        switch op {
        case .task:
            scheduler.schedule { recorder.record(id) }
        case .timer(let delay, let leeway):
            recorder.due(id, after: delay)
            let disposable =
                leeway == .zero
                ? scheduler.schedule(after: delay) { recorder.record(id) }
                : scheduler.schedule(
                    after: delay,
                    leeway: leeway,
                    handler: RecordingHandler { recorder.record(id) }
                )
            if script.disposedAtEnd(id) { kept[id] = disposable }
        case .wallTimer(let wallDate):
            let date: Date
            switch wallDate {
            case .offset(let offset): date = scheduler.now.addingTimeInterval(Double(offset.nanoseconds) / 1e9)
            case .distantFuture: date = .distantFuture
            case .distantPast: date = .distantPast
            }
            let due = Nanoseconds.sinceEpoch(date)
            trace.withLock { $0.wallDue[id] = due }
            let disposable = scheduler.schedule(at: date) { recorder.record(id) }
            if script.disposedAtEnd(id) { kept[id] = disposable }
        case .periodic(let delay, let interval, let leeway, let ticks, let stall):
            recorder.due(id, after: delay)
            // The disposing tick waits for the driver to have stored the disposable: with a tiny
            // interval, it may come before `schedule` returned.
            let slot = LockedValue<(any Disposable)?>(nil)
            let stored = DispatchSemaphore(value: 0)
            let count = LockedValue(0)
            let stallNanoseconds = Nanoseconds.multiplying(Int64(stall), interval.nanoseconds)
            let disposable = scheduler.schedule(after: delay, repeatingEvery: interval, leeway: leeway) {
                recorder.record(id) {
                    let tick = count.withLock { value -> Int in
                        value += 1
                        return value
                    }
                    if tick == 1 && stall > 0 {
                        let until = Nanoseconds.adding(Nanoseconds.monotonicNow(), stallNanoseconds)
                        while Nanoseconds.monotonicNow() < until {}
                    }
                    if tick == ticks {
                        stored.wait()
                        slot.withLock { $0 }?.dispose()
                    }
                }
            }
            slot.withLock { $0 = disposable }
            stored.signal()
            if script.disposedAtEnd(id) { kept[id] = disposable }
        case .timerDisposedAtOnce(let delay):
            let disposable = scheduler.schedule(after: delay) { recorder.record(id) }
            disposable.dispose()
            let now = clock()
            trace.withLock { $0.disposedAt[id] = now }
        case .timerDisposedByOtherThread(let delay, let after):
            recorder.due(id, after: delay)
            let disposable = scheduler.schedule(after: delay) { recorder.record(id) }
            otherThreads.enter()
            let trace = trace
            let group = otherThreads
            DispatchQueue.global().asyncAfter(deadline: .now() + (virtual ? .nanoseconds(0) : after.dispatchInterval)) {
                let won: Bool
                if let reporting = disposable as? any DisposeOutcomeReporting {
                    won = reporting.disposeReportingPending()
                } else {
                    disposable.dispose()
                    won = false
                }
                trace.withLock { if won { $0.wonDisposal.insert(id) } }
                group.leave()
            }
            if virtual { otherThreads.wait() }
        case .nested(let children):
            scheduler.schedule {
                recorder.record(id) {
                    for child in 1...children { scheduler.schedule { recorder.record(id, child: child) } }
                }
            }
        case .recursive(let runs):
            let count = LockedValue(0)
            scheduler.scheduleRecursive { reschedule in
                recorder.record(id)
                let run = count.withLock { value -> Int in
                    value += 1
                    return value
                }
                if run < runs { reschedule() }
            }
        case .actorCalls(let calls):
            let pinned = PinnedActor(scheduler: scheduler)
            // Odd counts call from a task that prefers the scheduler (a hop through its queue
            // each way, on its thread), even ones from the global pool (a thread hand-off).
            let preference: (any TaskExecutor)? = calls % 2 == 1 ? scheduler as? any TaskExecutor : taskExecutor
            Task(executorPreference: preference) {
                for _ in 0..<calls { await pinned.call { recorder.record(id) } }
            }
        case .sleep(let delay):
            // Never cancelled: a throw is a lost run, which the outcome check reports.
            sleepTask(id, delay)
        case .sleepCancelledByOtherThread(let delay, let after):
            // Cancelled: the sleep throws, as it must, and nothing runs.
            let sleeper = sleepTask(id, delay)
            if virtual {
                // At virtual time `after`, from the advancing thread: the sleep may be pending
                // then, which a cancel before the first advance would never exercise.
                scheduler.schedule(after: after) { sleeper.cancel() }
            } else {
                otherThreads.enter()
                let group = otherThreads
                DispatchQueue.global().asyncAfter(deadline: .now() + after.dispatchInterval) {
                    sleeper.cancel()
                    group.leave()
                }
            }
        case .pause:
            break
        }
    }
}
#endif
