import Foundation

/// Programmer-error checks with messages that name the method, the parameter label and the value,
/// such as `QueueScheduler.schedule(after:repeatingEvery:leeway:): repeatingEvery must be positive
/// (got 0.0 seconds)`. They stop the program in every build configuration (`fatalError`, which
/// `-O` keeps, unlike `precondition`'s message). The method name is only built on failure.
package enum BadInput {
    /// Stops the program if `date` is not finite.
    package static func checkDate(
        _ date: Date,
        method: @autoclosure () -> String,
        parameter: String = "at",
        file: StaticString = #fileID,
        line: UInt = #line
    ) {
        let seconds = date.timeIntervalSinceReferenceDate
        require(seconds.isFinite, method(), parameter, "must be a finite date", got: seconds, file: file, line: line)
    }

    /// Stops the program if `leeway` is negative.
    package static func checkLeeway(
        _ leeway: Duration,
        method: @autoclosure () -> String,
        file: StaticString = #fileID,
        line: UInt = #line
    ) {
        require(leeway >= .zero, method(), "leeway", "must not be negative", got: leeway, file: file, line: line)
    }

    /// Stops the program unless `value` is positive; `parameter` is its label.
    package static func checkPositive(
        _ value: Duration,
        parameter: String,
        method: @autoclosure () -> String,
        file: StaticString = #fileID,
        line: UInt = #line
    ) {
        require(value > .zero, method(), parameter, "must be positive", got: value, file: file, line: line)
    }

    /// The name of `scheduler`'s type, for messages: `QueueScheduler`, `TestScheduler`.
    package static func typeName(_ scheduler: some AnyObject) -> String {
        String(describing: type(of: scheduler))
    }

    /// The one check and the one message format, `method: parameter rule (got value)`, that every
    /// checker above shares.
    @inline(__always)
    private static func require(
        _ holds: Bool,
        _ method: @autoclosure () -> String,
        _ parameter: String,
        _ rule: StaticString,
        got value: some CustomStringConvertible,
        file: StaticString,
        line: UInt
    ) {
        if !holds { fatalError("\(method()): \(parameter) \(rule) (got \(value))", file: file, line: line) }
    }
}
