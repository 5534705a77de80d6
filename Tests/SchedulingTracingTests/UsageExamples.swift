#if Tracing
import InMemoryTracing
import LoopScheduling
import Scheduling
import SchedulingTracing
import Testing
import Tracing

// Usage examples (the earlier README's), kept as tests of what they promise. The examples of
// the README and the DocC articles themselves are compiled and run from an outside consumer
// package by `make examples`.

@Suite("Usage examples: trace context")
struct TracingUsageExamples {
    @Test("A loop callback and a virtual-time timeout in the request's trace")
    func traceContext() async throws {
        let tracer = InMemoryTracer()
        // The request's 30 s timeout cannot have fired if the whole example took less.
        let started = Nanoseconds.monotonicNow()
        let loop = try LoopScheduler(name: "io")
        let traced = loop.propagatingServiceContext()  // the same loop, carrying ServiceContext

        await tracer.withSpan("GET /orders") { _ in
            let timeout = traced.schedule(after: .seconds(30)) {
                tracer.withSpan("GET /orders timed out") { _ in }  // a child of "GET /orders"
            }
            defer { timeout.dispose() }
            // Work hopped onto the loop runs on the loop thread, outside this task, and still in
            // this request's trace: its span is a child of "GET /orders".
            await withCheckedContinuation { done in
                traced.schedule {
                    tracer.withSpan("cache lookup") { _ in }
                    done.resume()
                }
            }
        }

        // In tests, on virtual time: the timeout fires in the context of the request that armed it.
        let test = TestScheduler()
        tracer.withSpan("GET /slow") { span in
            span.attributes["http.route"] = "/slow"
            test.propagatingServiceContext().schedule(after: .seconds(2)) {
                tracer.withSpan("GET /slow timed out") { _ in }  // a child of "GET /slow"
            }
        }
        test.advance(by: .seconds(2))
        let took = Nanoseconds.monotonicNow() - started
        await loop.shutdown()

        let spans = Dictionary(tracer.finishedSpans.map { ($0.operationName, $0.spanContext) }) { first, _ in first }
        let orders = try #require(spans["GET /orders"])
        let lookup = try #require(spans["cache lookup"])
        #expect(lookup.parentSpanID == orders.spanID && lookup.traceID == orders.traceID)
        if took < 30_000_000_000 {
            #expect(spans["GET /orders timed out"] == nil, "the 30 s timeout was disposed when the request ended")
        } else if let timedOut = spans["GET /orders timed out"] {
            // A machine that stalled past the timeout: it fired, in the request's trace.
            #expect(timedOut.parentSpanID == orders.spanID && timedOut.traceID == orders.traceID)
        }
        let slow = try #require(spans["GET /slow"])
        let timedOut = try #require(spans["GET /slow timed out"])
        #expect(timedOut.parentSpanID == slow.spanID && timedOut.traceID == slow.traceID)
    }
}
#endif
