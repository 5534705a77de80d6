import Instrumentation
import Logging

/// A request's trace id, kept in its `ServiceContext` as a tracer's middleware would keep its span
/// (the example has no tracing backend: the id is what it logs).
enum TraceIDKey: ServiceContextKey {
    typealias Value = String
    static var nameOverride: String? { "trace-id" }
}

extension ServiceContext {
    /// The request's trace id, if the code runs in a request's context.
    var traceID: String? {
        get { self[TraceIDKey.self] }
        set { self[TraceIDKey.self] = newValue }
    }
}

/// The trace id of a W3C `traceparent` header (`00-<32 hex>-<16 hex>-<2 hex>`), so a client can
/// find its request in the log; a fresh random one when the header is missing or malformed.
func traceID(fromTraceparent header: String?) -> String {
    if let header {
        let fields = header.split(separator: "-", omittingEmptySubsequences: false)
        if fields.count == 4, fields[0] == "00", fields[1].count == 32,
            fields[1].allSatisfy(\.isHexDigit), fields[1].contains(where: { $0 != "0" })
        {
            return fields[1].lowercased()
        }
    }
    return (0..<2).map { _ in
        let half = String(UInt64.random(in: .min ... .max), radix: 16)
        return String(repeating: "0", count: 16 - half.count) + half
    }.joined()
}

extension Logger.MetadataProvider {
    /// `trace_id`, from `ServiceContext.current`: present on every log line written in a request's
    /// context — in its task, and in a loop callback only if the context was carried there.
    static let traceID = Logger.MetadataProvider {
        guard let id = ServiceContext.current?.traceID else { return [:] }
        return ["trace_id": "\(id)"]
    }
}
