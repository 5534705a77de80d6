import Prometheus

/// The server's counters, exported by `GET /metrics` in Prometheus' text format. Thread-safe:
/// every event loop of the server counts into them.
struct ServerMetrics: Sendable {
    let registry = PrometheusCollectorRegistry()
    /// `requests_total{route="fast"}`: requests to `/`.
    let fastRequests: Counter
    /// `requests_total{route="slow"}`: requests to `/slow`.
    let slowRequests: Counter
    /// `timeouts_fired_total`: request timeouts that passed before the answer (each one a 504).
    let timeoutsFired: Counter
    /// `idle_timeouts_fired_total`: connections closed for being idle.
    let idleTimeoutsFired: Counter

    init() {
        let requests = MetricNameDescriptor(
            metricName: "requests",
            unitName: "total",
            helpText: "Requests, by route (fast: /, slow: /slow)."
        )
        fastRequests = registry.makeCounter(descriptor: requests, labels: [("route", "fast")])
        slowRequests = registry.makeCounter(descriptor: requests, labels: [("route", "slow")])
        timeoutsFired = registry.makeCounter(
            descriptor: MetricNameDescriptor(
                metricName: "timeouts_fired",
                unitName: "total",
                helpText: "Request timeouts that passed before the answer (each one a 504)."
            )
        )
        idleTimeoutsFired = registry.makeCounter(
            descriptor: MetricNameDescriptor(
                metricName: "idle_timeouts_fired",
                unitName: "total",
                helpText: "Connections closed for being idle."
            )
        )
    }

    /// The Prometheus text of every counter.
    func export() -> [UInt8] {
        registry.emitToBuffer()
    }
}
