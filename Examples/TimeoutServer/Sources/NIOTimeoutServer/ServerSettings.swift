import Logging

/// What every connection's handler shares: the deadlines, the counters, the logger.
struct ServerSettings: Sendable {
    /// The deadline of `/`: long (30 s by default), so it never passes; armed and cancelled on
    /// every request.
    var fastTimeout: Duration
    /// The deadline of `/slow` (50 ms by default): `/slow?ms=200` answers 504.
    var slowTimeout: Duration
    /// How long a connection may go without a read before it is closed; longer than both deadlines,
    /// so it never cuts a request short.
    var idleTimeout: Duration
    let metrics: ServerMetrics
    let logger: Logger
}
