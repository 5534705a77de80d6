import AllocationCounting
import Dispatch
import Scheduling
@_spi(Workloads) import SchedulingWorkloads
import Synchronization

/// Operations per measurement of the synchronous paths, and the batches they come in: at most 20
/// operations a batch (40 queued items for timers scheduled and disposed from another thread),
/// under the 64 a quiet loop keeps room for in its buffers and spare lists
/// (LoopEntryRecycler.keptAtRest), so no batch pays for memory the previous one gave back.
public let operations = 512
public let batches = 32

/// A timer's handler that must never fire (its timer is disposed first).
final class StrayHandler: SchedulerTimerHandler {
    let strays: Tally

    init(_ strays: Tally) {
        self.strays = strays
    }

    func timerFired() { strays.add() }
}

/// Handles of the timers of one batch, in an array whose capacity is reserved beforehand.
public final class Handles<Handle: Sendable>: Sendable {
    public let items = Mutex<[Handle]>([])

    public init(capacity: Int) {
        items.withLock { $0.reserveCapacity(capacity) }
    }
}

/// `schedule {}` + run, `schedule(after:)` + `dispose` (closure and handler timers), `rearm`
/// later and earlier, and a periodic tick, on `target`. Every action is one closure made
/// beforehand, so the figures are the scheduler's own: a closure literal that captures values adds
/// its context, one malloc, wherever it is written.
public func timerPaths(_ target: ProbeTarget, _ report: AllocationReport) {
    let scheduler = target.scheduler
    let ran = Tally()
    let strays = Tally()
    let action: @Sendable () -> Void = { ran.add() }
    let stray: @Sendable () -> Void = { strays.add() }
    let handler = StrayHandler(strays)
    let handles = Handles<any Disposable>(capacity: 2 * operations / batches)

    // A closure timer and a handler timer (what sleeps and timeouts schedule), each 30 s out.
    let timers: [(operation: String, call: String, arm: @Sendable () -> any Disposable)] = [
        ("schedule-after+dispose", "schedule(after: 30 s) {}", { scheduler.schedule(after: .seconds(30), stray) }),
        (
            "handler-after+dispose", "schedule(after: 30 s, leeway: .zero, handler: shared)",
            { scheduler.schedule(after: .seconds(30), leeway: .zero, handler: handler) }
        ),
    ]

    for side in [Side.own, .other] {
        let ranBefore = ran.count
        target.measure(
            report,
            "schedule+run",
            side,
            "schedule {} \(target.issued(side)), and its run",
            operations: operations
        ) { n in
            target.inBatches(n, batches: batches, on: side) { count in
                for _ in 0..<count { scheduler.schedule(action) }
            }
        }
        let issued = AllocationReport.issued(operations)
        report.expect(target.path("schedule+run", side), ran.count - ranBefore, of: issued, "actions ran")

        for timer in timers {
            let description = "\(timer.call) and dispose() \(target.issued(side))"
            target.measure(report, timer.operation, side, description, operations: operations) { n in
                target.inBatches(n, batches: batches, on: side) { count in
                    handles.items.withLock { pending in
                        for _ in 0..<count { pending.append(timer.arm()) }
                        for each in pending { each.dispose() }
                        pending.removeAll(keepingCapacity: true)
                    }
                }
            }
        }

        rearmPaths(target, side, report, stray: stray)
    }

    periodicTickPath(target, report)
    report.expect("\(target.name)/*", strays.count, of: 0, "timers fired after they were disposed")
}

/// How far the earlier re-arms have pulled their timers in, in steps of 10 ms (from 10 hours out,
/// so never near: every path's every run together takes a few minutes of it).
private let pulledIn = Atomic<Int64>(0)

/// `rearm(after:)` on a pending timer (one of 16, 10 hours out): to a later deadline (now + 10 h),
/// and to an earlier one (10 ms earlier than the last one the ring was given: for it to be later
/// than that timer's own last deadline, the ring's 16 re-arms would have to take 160 ms).
private func rearmPaths(
    _ target: ProbeTarget,
    _ side: Side,
    _ report: AllocationReport,
    stray: @escaping @Sendable () -> Void
) {
    let ring = Handles<any RearmableTimer>(capacity: 16)
    let refused = Tally()
    let far: Duration = .seconds(36_000)
    target.onScheduler {
        ring.items.withLock { timers in
            for _ in 0..<16 { timers.append(target.scheduler.scheduleRearmable(after: far, stray)) }
        }
    }
    for later in [true, false] {
        let description =
            "rearm(after:) of a pending timer to \(later ? "a later" : "an earlier") deadline \(target.issued(side))"
        target.measure(report, later ? "rearm-later" : "rearm-earlier", side, description, operations: operations) {
            n in
            target.inBatches(n, batches: batches, on: side) { count in
                ring.items.withLock { timers in
                    for index in 0..<count {
                        let delay: Duration =
                            later ? far : far - .milliseconds(10 * pulledIn.add(1, ordering: .relaxed).newValue)
                        if !timers[index % timers.count].rearm(after: delay) { refused.add() }
                    }
                }
            }
        }
    }
    ring.items.withLock { timers in
        for timer in timers { timer.dispose() }
    }
    target.roundTrip()
    if refused.count != 0 {
        report.fail(
            "\(target.path("rearm-*", side)): rearm(after:) of a pending timer returned false \(refused.count) times"
        )
    }
}

/// One run of the periodic tick path: the timer, its tick count and the wait for its last tick.
private final class TickRun: Sendable {
    let target: Int
    let ticked = Atomic<Int>(0)
    let timer = Mutex<(any Disposable)?>(nil)
    let done = DispatchSemaphore(value: 0)

    init(ticks: Int) {
        target = ticks
    }

    func tick() {
        guard ticked.add(1, ordering: .relaxed).newValue == target else { return }
        timer.withLock { $0?.dispose() }
        done.signal()
    }
}

/// One tick of a periodic timer (every 200 µs): `16 + operations / 2` ticks against 16, the timer
/// disposed from its last tick.
private func periodicTickPath(_ target: ProbeTarget, _ report: AllocationReport) {
    let baseTicks = 16
    let extra = operations / 2
    func ticks(_ count: Int) {
        let run = TickRun(ticks: count)
        target.onScheduler {
            // Scheduled on the scheduler, which is serial: no tick runs before the handle is stored.
            let periodic = target.scheduler.schedule(after: .microseconds(200), repeatingEvery: .microseconds(200)) {
                run.tick()
            }
            run.timer.withLock { $0 = periodic }
        }
        run.done.wait()
        target.roundTrip()
    }
    report.measure(
        "\(target.name)/periodic-tick",
        "one tick of schedule(after:repeatingEvery: 200 µs), on the \(target.place)",
        operations: extra,
        countsLoopThread: target.countsLoopThread,
        baseline: { ticks(baseTicks) },
        run: { ticks(baseTicks + extra) }
    )
}
