#if ServiceLifecycle
/// Thrown by the `run()` of a ``LoopScheduling/LoopScheduler`` or
/// ``LoopScheduling/LoopSchedulerGroup`` service that was run before (or is running now).
///
/// A loop runs as a service once: its `run()` shuts it down on the way out, and a shut-down loop
/// cannot run again. Of two `run()` calls racing each other, exactly one runs, and the other
/// throws this at once, without touching the loops.
public struct ServiceAlreadyRunError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The service that was run twice, such as `LoopScheduler "io-0"`.
    public let service: String

    /// An error about `service`.
    public init(service: String) {
        self.service = service
    }

    /// Says which service was run twice.
    public var description: String {
        "\(service).run() was called again: a loop runs as a service once (it shuts down when run() returns)"
    }
}
#endif
