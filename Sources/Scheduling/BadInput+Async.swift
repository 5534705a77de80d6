/// Bad-input checks of the async layer, with rule 4.9's message shape.
extension BadInput {
    /// Stops the program if `leeway` is negative.
    package static func checkLeeway(
        _ leeway: Duration,
        method: @autoclosure () -> String,
        file: StaticString = #fileID,
        line: UInt = #line
    ) {
        if leeway < .zero {
            fatalError("\(method()): leeway must not be negative (got \(leeway))", file: file, line: line)
        }
    }

    /// Stops the program unless `value` is positive; `parameter` is its label.
    package static func checkPositive(
        _ value: Duration,
        parameter: String,
        method: @autoclosure () -> String,
        file: StaticString = #fileID,
        line: UInt = #line
    ) {
        if value <= .zero {
            fatalError("\(method()): \(parameter) must be positive (got \(value))", file: file, line: line)
        }
    }

    /// The name of `scheduler`'s type, for messages: `QueueScheduler`, `TestScheduler`.
    package static func typeName(_ scheduler: some AnyObject) -> String {
        String(describing: type(of: scheduler))
    }
}
