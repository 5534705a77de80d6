/// Thrown by ``DateScheduler/withTimeout(_:_:)`` when the timeout elapsed before the operation
/// finished (or at once, for a timeout that is not positive).
public struct TimeoutError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The timeout that elapsed.
    public let timeout: Duration

    /// Makes the error for `timeout`.
    public init(timeout: Duration) {
        self.timeout = timeout
    }

    /// `TimeoutError(timeout: …)`, with the timeout that elapsed.
    public var description: String { "TimeoutError(timeout: \(timeout))" }
}
