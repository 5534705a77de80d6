/// A workload's run did not finish within its bound: work that never ran, timers that never
/// fired. The description says what is missing, as a self-check failure.
@_spi(Workloads)
public struct WorkloadTimeout: Error, Sendable, CustomStringConvertible {
    /// What is missing, as the self-check reports it ("12 of 100 timers never fired").
    public let description: String

    /// A timeout that reports `description`.
    public init(_ description: String) {
        self.description = description
    }
}
