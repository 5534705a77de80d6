import CoreMetrics
import Hummingbird
import Instrumentation
import NIOCore

/// The deadlines the routes run under.
struct RouteTimeouts: Sendable {
    /// For `/`: long (30 s by default), so it never passes; armed and cancelled on every request.
    var fast: Duration
    /// For `/slow`: short (50 ms by default), so `/slow?ms=200` answers 504.
    var slow: Duration
}

/// The longest `/slow?ms=` accepted.
let maximumSlowMilliseconds = 60_000

/// The server's routes:
/// - `GET /` answers a small body at once, its handler run under the `fast` deadline;
/// - `GET /slow?ms=N` sleeps N ms under the `slow` deadline: 200 if it woke first, 504 if not;
/// - `GET /metrics` exports `registry` in Prometheus' text format.
///
/// `requests_total{route="fast"|"slow"}` counts the requests to the first two.
func makeRouter(
    timeouts: RequestTimeouts,
    deadlines: RouteTimeouts,
    exportMetrics: @escaping @Sendable () -> [UInt8]
) -> Router<ConnectionRequestContext> {
    let fastRequests = Counter(label: "requests_total", dimensions: [("route", "fast")])
    let slowRequests = Counter(label: "requests_total", dimensions: [("route", "slow")])
    let router = Router(context: ConnectionRequestContext.self)

    router.get("/") { _, context -> Response in
        fastRequests.increment()
        guard let body = try await timeouts.run(within: deadlines.fast, on: context.eventLoop, { greeting }) else {
            return Response(status: .gatewayTimeout)
        }
        return Response(
            status: .ok,
            headers: [.contentType: "text/plain; charset=utf-8"],
            body: .init(byteBuffer: body)
        )
    }

    router.get("/slow") { request, requestContext -> Response in
        slowRequests.increment()
        // The request's trace: its id in the ServiceContext, as tracing middleware would set it.
        var context = ServiceContext.current ?? .topLevel
        let header = request.headers.first { $0.name.canonicalName == "traceparent" }
        context.traceID = traceID(fromTraceparent: header?.value)
        return try await ServiceContext.withValue(context) {
            try await slowResponse(
                to: request,
                on: requestContext.eventLoop,
                timeouts: timeouts,
                deadline: deadlines.slow
            )
        }
    }

    router.get("/metrics") { _, _ -> Response in
        Response(
            status: .ok,
            headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(bytes: exportMetrics()))
        )
    }
    return router
}

/// `/slow?ms=N`: sleeps N ms under `deadline`; 200 if it woke first, 504 if not, 400 for a bad N.
private func slowResponse(
    to request: Request,
    on eventLoop: any EventLoop,
    timeouts: RequestTimeouts,
    deadline: Duration
) async throws -> Response {
    guard
        let text = request.uri.queryParameters["ms"], let milliseconds = Int(text),
        (0...maximumSlowMilliseconds).contains(milliseconds)
    else {
        return Response(status: .badRequest)
    }
    let slept = try await timeouts.run(within: deadline, on: eventLoop) {
        try await Task.sleep(for: .milliseconds(milliseconds))
        return milliseconds
    }
    guard let slept else { return Response(status: .gatewayTimeout) }
    return Response(
        status: .ok,
        headers: [.contentType: "text/plain; charset=utf-8"],
        body: .init(byteBuffer: ByteBuffer(string: "slept \(slept) ms\n"))
    )
}

/// The body of `/`.
private let greeting = ByteBuffer(string: "Hello from the loop!\n")
