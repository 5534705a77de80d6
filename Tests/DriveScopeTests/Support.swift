import Foundation
import Scheduling
import Synchronization

/// How many times each test repeats its scenario: `DRIVE_ITERATIONS` (default 200). A flaky
/// scenario shows as a count of failed iterations, not as one lucky pass.
let iterations = ProcessInfo.processInfo.environment["DRIVE_ITERATIONS"].flatMap(Int.init) ?? 200

/// `DRIVE_WITHOUT_SCOPE=1` runs every test here with `drive` taking no task in (as it was before
/// it did): each scenario test then fails, which shows what it catches.
let withoutScope = ProcessInfo.processInfo.environment["DRIVE_WITHOUT_SCOPE"] != nil

/// A test scheduler for one iteration.
func makeTestScheduler() -> TestScheduler {
    let test = TestScheduler()
    if withoutScope { test.takesInTasks = false }
    return test
}

/// The iterations whose outcome differed from the expected one, with the first few outcomes.
struct Tally<Outcome: Equatable & Sendable>: CustomStringConvertible {
    let expected: Outcome
    private(set) var runs = 0
    private(set) var failures = 0
    private(set) var examples: [Outcome] = []

    init(expecting expected: Outcome) { self.expected = expected }

    mutating func record(_ outcome: Outcome) {
        runs += 1
        guard outcome != expected else { return }
        failures += 1
        if examples.count < 3 { examples.append(outcome) }
    }

    var description: String {
        "\(failures) of \(runs) iterations failed (expected \(expected); got, e.g., \(examples))"
    }
}

/// State shared between a test and the tasks it starts: a `Mutex` in a class, so that a closure
/// captures a reference to it (a local `Mutex` captured by a task's closure is a region error).
final class Shared<Value: Sendable>: Sendable {
    private let mutex: Mutex<Value>

    init(_ value: Value) { mutex = Mutex(value) }

    func withLock<Result>(_ body: (inout Value) -> Result) -> Result {
        mutex.withLock { body(&$0) }
    }
}
