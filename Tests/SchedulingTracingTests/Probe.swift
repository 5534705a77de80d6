#if Tracing
import InMemoryTracing
import Instrumentation
import Scheduling
import Tracing

/// What an action saw when it ran: the span it started (whose parent is whatever context was
/// current) and the current scheduler.
struct Sighting: Sendable {
    let name: String
    let span: InMemorySpanContext
    let current: ObjectIdentifier?
}

/// Records, from inside actions, a child span of the current context, and lets a test await them.
final class Probe: Sendable {
    let tracer = InMemoryTracer()
    /// Every sighting, in the order the actions ran; a test iterates it once.
    let sightings: AsyncStream<Sighting>
    private let continuation: AsyncStream<Sighting>.Continuation

    init() {
        (sightings, continuation) = AsyncStream<Sighting>.makeStream()
    }

    /// Starts and ends a span named `name` in the current `ServiceContext` (a root span when there
    /// is none), as a timeout callback that traces would.
    func record(_ name: String = "callback") {
        let span = tracer.startSpan(name)
        span.end()
        continuation.yield(
            Sighting(name: name, span: span.spanContext, current: Schedulers.current.map(ObjectIdentifier.init))
        )
    }

    /// Runs `body` inside a span named `name` and returns that span's identity.
    func inSpan(_ name: String, _ body: () throws -> Void) rethrows -> InMemorySpanContext {
        let span = tracer.startSpan(name)
        defer { span.end() }
        try ServiceContext.withValue(span.context) { try body() }
        return span.spanContext
    }
}

extension AsyncStream<Sighting>.Iterator {
    /// The next `count` sightings.
    mutating func next(_ count: Int) async -> [Sighting] {
        var sightings: [Sighting] = []
        while sightings.count < count, let sighting = await next() {
            sightings.append(sighting)
        }
        return sightings
    }
}

/// A closure-free timer handler (as `sleep`, `ticks` and `withTimeout` use) that records what it saw.
struct ProbeHandler: SchedulerTimerHandler {
    let probe: Probe

    func timerFired() { probe.record("fired") }
    func timerCancelledByScheduler() { probe.record("cancelled") }
}
#endif
