#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Mallocs per operation of one path, by thread, and frees per operation.
public struct PathFigures: Sendable, Equatable {
    /// On the probe's own thread.
    public var caller: Double
    /// On the event loop's thread (nil: the path has no loop thread counted apart).
    public var loop: Double?
    /// On every other thread: Dispatch's workers, the cooperative pool.
    public var other: Double
    /// Frees on all threads.
    public var frees: Double

    /// The mallocs columns.
    var mallocs: [Double] { [caller, loop ?? 0, other] }
    /// Mallocs on all threads.
    var total: Double { caller + (loop ?? 0) + other }
}

/// An allocation probe's measurements and its output, in the format `scripts/check-allocations.py`
/// reads (see the header of `Tests/AllocationLimits/limits.txt`): one line per path,
///
///     path  caller  loop  other  frees  [varied(…)]  # what one operation is
///
/// each figure per operation. A path is measured as a difference: `run` performs the path's N
/// operations inside a harness (batches and round trips, or one task) and `baseline` the same
/// harness with fewer of them, each once to warm up, then ``rounds`` times alternated. Each reading
/// is taken once the process's counts stood still for a millisecond (a thread that wakes a waiter
/// may still free after the wake-up). Each column's median reading of the runs minus that of the
/// baselines, over N, is the steady-state cost: the harness's own allocations cancel, and so do
/// the odd reading's extra or missing ones (a buffer that a quiet loop gave back and grows again,
/// a Dispatch cache that had a spare). Rounds whose differences disagree are marked `varied(…)`,
/// with each round's mallocs per operation.
public final class AllocationReport {
    /// Measured rounds of each path (after one run to warm up).
    public static let rounds = 5
    /// How often ``measure(_:_:operations:countsLoopThread:baseline:run:)`` calls `run` (and
    /// `baseline`): for a probe's self-checks.
    public static let runs = rounds + 1

    /// Operations that `measure(_:_:operations:countsLoopThread:_:)` hands its body in all, for a
    /// probe's self-check (actions that ran, calls that returned).
    public static func issued(_ operations: Int) -> Int {
        runs * (2 * (operations / 4) + operations)
    }

    /// The probe's name: its section in the limits file.
    public let probe: String
    private let started = ContinuousClock.now
    private var paths = 0
    private var failures: [String] = []

    private init(probe: String) {
        self.probe = probe
    }

    /// The report, its header printed; or nil, with "skipped" printed, when the interposer is
    /// compiled out (under a sanitizer): the probe then exits 0 without measuring. Call it first,
    /// on the thread that runs the paths (registered as ``AllocationCounter/callerSlot``).
    public static func start(probe: String) -> AllocationReport? {
        if let reason = AllocationCounter.disabledReason {
            print("\(probe): skipped (\(reason)): the allocation counter is compiled out")
            return nil
        }
        AllocationCounter.registerCurrentThread(as: AllocationCounter.callerSlot)
        print("# \(probe): mallocs per operation on the probe's thread (caller), the event loop's thread (loop;")
        print("# - where the path has none) and every other thread (other), and frees per operation")
        print(line("# path", ["caller", "loop", "other", "frees"]))
        return AllocationReport(probe: probe)
    }

    /// Measures `operations` operations of `path`: `body(operations / 4 + operations)` against
    /// `body(operations / 4)` (not against `body(0)`: a first operation may pay once for what its
    /// harness then keeps, such as a further slab of its task's stack).
    public func measure(
        _ path: String,
        _ description: String,
        operations: Int,
        countsLoopThread: Bool,
        _ body: (_ operations: Int) -> Void
    ) {
        measure(
            path,
            description,
            operations: operations,
            countsLoopThread: countsLoopThread,
            baseline: { body(operations / 4) },
            run: { body(operations / 4 + operations) }
        )
    }

    /// Measures `path`: `run` against `baseline`, over `operations` (what `run` does more), and
    /// prints its line.
    public func measure(
        _ path: String,
        _ description: String,
        operations: Int,
        countsLoopThread: Bool,
        baseline: () -> Void,
        run: () -> Void
    ) {
        precondition(operations > 0, "AllocationReport.measure: operations must be positive")
        _ = Reading.across(baseline, countsLoopThread)
        _ = Reading.across(run, countsLoopThread)
        var bases: [Reading] = []
        var runs: [Reading] = []
        for _ in 0..<Self.rounds {
            bases.append(Reading.across(baseline, countsLoopThread))
            runs.append(Reading.across(run, countsLoopThread))
        }
        // The steady state: each column's median, of the baselines and of the runs apart. A reading
        // may also have paid for a buffer that a quiet loop (or Dispatch) gave back in between and
        // that grew again, or saved an allocation that a Dispatch cache had spare.
        let steady = Reading.median(of: runs).figures(minus: Reading.median(of: bases), operations: operations)
        var columns = [Self.format(steady.caller), countsLoopThread ? Self.format(steady.loop ?? 0) : "-"]
        columns += [Self.format(steady.other), Self.format(steady.frees)]
        var text = Self.line(path, columns)
        let rounds = zip(runs, bases).map { $0.figures(minus: $1, operations: operations) }
        if rounds.contains(where: { $0.mallocs != rounds[0].mallocs }) {
            let totals = rounds.map { Self.format($0.total) }
            text += "  varied(\(totals.joined(separator: ",")))"
        }
        print(text + "  # " + description)
        paths += 1
    }

    /// A self-check of the probe failed (an action that did not run, a timer that fired): printed
    /// now; ``finish()`` then exits 1.
    public func fail(_ message: String) {
        print("FAILED: \(message)")
        failures.append(message)
    }

    /// A self-check: fails the probe unless `count` of `path`'s operations did what they must
    /// (`what`: "actions ran", "calls returned"), as many as `expected`.
    public func expect(_ path: String, _ count: Int, of expected: Int, _ what: String) {
        if count != expected { fail("\(path): \(count) of \(expected) \(what)") }
    }

    /// Prints the number of paths and the time taken; exits 1 if a self-check failed, else 0.
    public func finish() -> Never {
        let elapsed = ContinuousClock.now - started
        let tenths = elapsed.components.seconds * 10 + elapsed.components.attoseconds / 100_000_000_000_000_000
        print("# \(probe): \(paths) paths in \(tenths / 10).\(tenths % 10) s")
        exit(failures.isEmpty ? 0 : 1)
    }

    static func line(_ path: String, _ columns: [String]) -> String {
        let padded = path.count < 46 ? path + String(repeating: " ", count: 46 - path.count) : path + " "
        return padded + columns.map { String(repeating: " ", count: max(0, 7 - $0.count)) + $0 }.joined(separator: " ")
    }

    /// Two decimals at most; whole numbers without any.
    static func format(_ value: Double) -> String {
        let hundredths = Int((value * 100).rounded())
        let magnitude = abs(hundredths)
        let sign = hundredths < 0 ? "-" : ""
        if magnitude % 100 == 0 { return sign + String(magnitude / 100) }
        let fraction = magnitude % 100
        return sign + "\(magnitude / 100)." + (fraction < 10 ? "0" : "")
            + (fraction % 10 == 0 ? String(fraction / 10) : String(fraction))
    }
}

/// The calls of one stretch of a path, by thread.
struct Reading {
    var caller: Int
    /// 0 when the loop's thread is not counted apart.
    var loop: Int
    var other: Int
    var frees: Int
    var countsLoopThread: Bool

    /// What `body` allocated and freed, read once the process's counts stood still for a
    /// millisecond (at most 100 ms after `body` returned): a thread that wakes a waiter may still
    /// free, and rarely allocate, after the wake-up.
    static func across(_ body: () -> Void, _ countsLoopThread: Bool) -> Reading {
        let before = Snapshot(countsLoopThread)
        body()
        var last = AllocationCounter.process
        var still = 0
        var polls = 0
        while still < 2 && polls < 200 {
            usleep(500)
            polls += 1
            let current = AllocationCounter.process
            still = current == last ? still + 1 : 0
            last = current
        }
        let after = Snapshot(countsLoopThread)
        let caller = after.caller.mallocs - before.caller.mallocs
        let loop = after.loop.mallocs - before.loop.mallocs
        return Reading(
            caller: caller,
            loop: loop,
            other: after.process.mallocs - before.process.mallocs - caller - loop,
            frees: after.process.frees - before.process.frees,
            countsLoopThread: countsLoopThread
        )
    }

    /// Each column's median among `readings` (an odd number of them).
    static func median(of readings: [Reading]) -> Reading {
        func median(_ column: KeyPath<Reading, Int>) -> Int {
            readings.map { $0[keyPath: column] }.sorted()[readings.count / 2]
        }
        return Reading(
            caller: median(\.caller),
            loop: median(\.loop),
            other: median(\.other),
            frees: median(\.frees),
            countsLoopThread: readings[0].countsLoopThread
        )
    }

    /// Per operation: this reading's calls minus `base`'s, over `operations`.
    func figures(minus base: Reading, operations: Int) -> PathFigures {
        let n = Double(operations)
        return PathFigures(
            caller: Double(caller - base.caller) / n,
            loop: countsLoopThread ? Double(loop - base.loop) / n : nil,
            other: Double(other - base.other) / n,
            frees: Double(frees - base.frees) / n
        )
    }
}

/// The counts at one moment: the probe's thread, the loop's thread (if counted) and the process.
struct Snapshot {
    let caller: AllocationCounts
    let loop: AllocationCounts
    let process: AllocationCounts

    init(_ countsLoopThread: Bool) {
        caller = AllocationCounter.counts(of: AllocationCounter.callerSlot)
        loop =
            countsLoopThread
            ? AllocationCounter.counts(of: AllocationCounter.loopSlot) : AllocationCounts(mallocs: 0, frees: 0)
        process = AllocationCounter.process
    }
}
