/// What `sleep-cancel` or `timeout` measured: operations (a sleep and its cancellation, a call
/// under a deadline) that one task or many started and that all ended.
@_spi(Workloads)
public struct AsyncRun: Sendable {
    /// The measured time, per operation.
    public var nanosecondsPerOperation: Double
    /// CPU time of the whole process over the run.
    public var cpuSeconds: Double
    /// Heap bytes still held once every operation ended and the caller's `settle` returned (may
    /// be negative).
    public var heldBytes: Int
    /// How often the operations woke the loop (nil without an `iterations` reading).
    public var loopIterations: Int?
    /// Operations that did not end as they must: a cancelled sleep that returned normally, a call
    /// that did not return the operation's value (must be 0).
    public var failedOperations: Int
}
