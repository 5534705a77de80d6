import ArgumentParser
import Logging

/// The command-line options both servers of this package take: where they listen, the deadlines of
/// `/` and `/slow`, and the log level.
public struct ServerOptions: ParsableArguments, Sendable {
    @Option(help: "The port to listen on, on 127.0.0.1 only (0: any free port, logged at start).")
    public var port: Int = 8080

    @Option(name: .customLong("timeout-ms"), help: "The deadline of `/`, in milliseconds.")
    public var timeoutMilliseconds: Int = 30_000

    @Option(name: .customLong("slow-timeout-ms"), help: "The deadline of `/slow`, in milliseconds.")
    public var slowTimeoutMilliseconds: Int = 50

    @Option(help: "The log level (trace, debug, info, notice, warning, error, critical).")
    public var logLevel: Logger.Level = .info

    public init() {}

    public func validate() throws {
        guard (0...65_535).contains(port) else { throw ValidationError("--port must be in 0...65535") }
        guard timeoutMilliseconds > 0, slowTimeoutMilliseconds > 0 else {
            throw ValidationError("--timeout-ms and --slow-timeout-ms must be positive")
        }
    }

    /// The deadline of `/`: long (30 s by default), so it never passes.
    public var fastTimeout: Duration { .milliseconds(timeoutMilliseconds) }
    /// The deadline of `/slow` (50 ms by default), so `/slow?ms=200` answers 504.
    public var slowTimeout: Duration { .milliseconds(slowTimeoutMilliseconds) }
}

extension Logger.Level: @retroactive ExpressibleByArgument {}
