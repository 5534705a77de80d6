import NIOHTTP1

/// What a request asks for.
enum Route: Equatable {
    /// `GET /`: a short body at once, under the fast deadline.
    case fast
    /// `GET /slow?ms=N`: the answer after N ms (a timer on the loop), under the slow deadline.
    case slow(milliseconds: Int)
    /// `GET /metrics`: the counters, under no deadline.
    case metrics
    /// A `/slow` whose `ms` is missing or out of range (400), another path (404), another method (405).
    case badRequest, notFound, methodNotAllowed

    /// The longest `/slow?ms=` accepted.
    static let maximumSlowMilliseconds = 60_000

    init(_ head: HTTPRequestHead) {
        let parts = head.uri.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        let path = parts[0]
        guard ["/", "/slow", "/metrics"].contains(path) else {
            self = .notFound
            return
        }
        guard head.method == .GET else {
            self = .methodNotAllowed
            return
        }
        switch path {
        case "/": self = .fast
        case "/metrics": self = .metrics
        default:
            let query = parts.count > 1 ? parts[1].split(separator: "&") : []
            let value = query.first { $0.hasPrefix("ms=") }?.dropFirst(3)
            guard let value, let milliseconds = Int(value), (0...Self.maximumSlowMilliseconds).contains(milliseconds)
            else {
                self = .badRequest
                return
            }
            self = .slow(milliseconds: milliseconds)
        }
    }
}
