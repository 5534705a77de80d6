#if Tracing
import Foundation
import InMemoryTracing
import Instrumentation
import LoopScheduling
import Scheduling
import SchedulingTracing
import Testing

/// `ServiceContext` from the `schedule` call into the action, on every scheduler kind. Each test
/// schedules inside a span; the action starts a span of its own, which must be that span's child.
/// The test scheduler is advanced inside another span, so an action that saw the context of
/// whoever runs it (rather than of whoever scheduled it) would fail.
@Suite(.timeLimit(.minutes(10)))  // a hang guard, not a speed check: loaded runs took over 3 min
struct PropagationTests {
    private func expectChild(_ sighting: Sighting, of parent: InMemorySpanContext, _ what: String) {
        #expect(sighting.span.traceID == parent.traceID, "\(what): another trace")
        #expect(sighting.span.parentSpanID == parent.spanID, "\(what): not a child of the scheduling span")
    }

    /// The wrapper a test schedules on: the `DateScheduler` one wherever the base is one.
    private func wrapper(_ scheduler: TracedScheduler) -> any Scheduler {
        scheduler.kind == .immediate
            ? scheduler.base.propagatingServiceContext() : scheduler.dateBase.propagatingServiceContext()
    }

    /// Runs `body` with a fresh scheduler of `kind`, a probe, and the probe's sightings to await.
    private func observe(
        _ kind: TracedKind,
        _ body: (TracedScheduler, Probe, inout AsyncStream<Sighting>.Iterator) async throws -> Void
    ) async throws {
        try await TracedScheduler.with(kind) { scheduler in
            let probe = Probe()
            var sightings = probe.sightings.makeAsyncIterator()
            try await body(scheduler, probe, &sightings)
        }
    }

    private func drive(_ scheduler: TracedScheduler, _ probe: Probe, by duration: Duration = .seconds(1)) {
        _ = probe.inSpan("driver") { scheduler.drive(by: duration) }
    }

    @Test(arguments: TracedKind.allCases)
    func taskRunsInTheSchedulingContext(_ kind: TracedKind) async throws {
        try await observe(kind) { scheduler, probe, sightings in
            let traced = wrapper(scheduler)
            let request = probe.inSpan("request") { traced.schedule { probe.record() } }
            drive(scheduler, probe)
            let seen = await sightings.next(1)
            try #require(seen.count == 1)
            expectChild(seen[0], of: request, "schedule(_:)")
        }
    }

    @Test(arguments: TracedKind.dateKinds)
    func oneShotTimersRunInTheSchedulingContext(_ kind: TracedKind) async throws {
        try await observe(kind) { scheduler, probe, sightings in
            let traced = scheduler.dateBase.propagatingServiceContext()
            let request = probe.inSpan("request") {
                traced.schedule(after: .milliseconds(5)) { probe.record("after") }
                traced.schedule(at: traced.now.addingTimeInterval(0.005)) { probe.record("at") }
                traced.schedule(after: .milliseconds(5), leeway: .zero, handler: ProbeHandler(probe: probe))
            }
            drive(scheduler, probe)
            let seen = await sightings.next(3)
            #expect(Set(seen.map(\.name)) == ["after", "at", "fired"])
            for sighting in seen { expectChild(sighting, of: request, sighting.name) }
        }
    }

    /// Three periodic timers from three requests: every tick of each sees its own request, not the
    /// context of the tick or timer before it.
    @Test(arguments: TracedKind.dateKinds)
    func everyTickRunsInItsTimersSchedulingContext(_ kind: TracedKind) async throws {
        try await observe(kind) { scheduler, probe, sightings in
            let traced = scheduler.dateBase.propagatingServiceContext()
            let timers = LockedValue<[any Disposable]>([])
            let interval = Duration.milliseconds(5)
            let a = probe.inSpan("A") {
                let timer = traced.schedule(after: interval, repeatingEvery: interval) { probe.record("A") }
                timers.withLock { $0.append(timer) }
            }
            let b = probe.inSpan("B") {
                let start = traced.now.addingTimeInterval(0.005)
                let timer = traced.schedule(at: start, repeatingEvery: interval, leeway: .zero) { probe.record("B") }
                timers.withLock { $0.append(timer) }
            }
            let c = probe.inSpan("C") {
                let handler = ProbeHandler(probe: probe)
                let timer = traced.schedule(after: interval, repeatingEvery: interval, leeway: .zero, handler: handler)
                timers.withLock { $0.append(timer) }
            }
            let parents = ["A": a, "B": b, "fired": c]
            drive(scheduler, probe, by: .milliseconds(20))
            var ticks: [String: Int] = [:]
            while ticks.values.count < 3 || ticks.values.contains(where: { $0 < 3 }) {
                guard let sighting = await sightings.next(1).first else { break }
                ticks[sighting.name, default: 0] += 1
                expectChild(sighting, of: parents[sighting.name]!, "tick \(ticks[sighting.name]!) of \(sighting.name)")
            }
            for timer in timers.withLock({ $0 }) { timer.dispose() }
            #expect(ticks.count == 3)
        }
    }

    @Test(arguments: TracedKind.allCases)
    func everyRunOfARecursionRunsInTheSchedulingContext(_ kind: TracedKind) async throws {
        try await observe(kind) { scheduler, probe, sightings in
            let traced = wrapper(scheduler)
            let runs = LockedValue(0)
            let recursion = LockedValue<(any Disposable)?>(nil)
            let request = probe.inSpan("request") {
                let disposable = traced.scheduleRecursive { reschedule in
                    probe.record()
                    let run = runs.withLock { count in
                        count += 1
                        return count
                    }
                    if run < 3 { reschedule() }
                }
                recursion.withLock { $0 = disposable }
            }
            drive(scheduler, probe)
            let seen = await sightings.next(3)
            recursion.withLock { $0 }?.dispose()
            try #require(seen.count == 3)
            for (index, sighting) in seen.enumerated() { expectChild(sighting, of: request, "run \(index + 1)") }
        }
    }

    /// The wrapper is a view: inside its actions `Schedulers.current` is what the base makes it
    /// (the base; nothing new on `ImmediateScheduler`), never the wrapper.
    @Test(arguments: TracedKind.allCases)
    func actionsRunWithTheBaseAsCurrentScheduler(_ kind: TracedKind) async throws {
        try await observe(kind) { scheduler, probe, sightings in
            let traced = wrapper(scheduler)
            _ = probe.inSpan("request") { traced.schedule { probe.record() } }
            drive(scheduler, probe)
            let seen = await sightings.next(1)
            try #require(seen.count == 1)
            #expect(seen[0].current == scheduler.expectedCurrent.map(ObjectIdentifier.init))
            #expect(seen[0].current != ObjectIdentifier(traced))
            if let dateWrapper = traced as? ServiceContextDateScheduler {
                #expect(dateWrapper.propagatingServiceContext() === dateWrapper)
                #expect((traced.propagatingServiceContext() as ServiceContextScheduler).base === dateWrapper.base)
            } else {
                #expect(traced.propagatingServiceContext() === traced)
            }
        }
    }

    /// No context at the call: the action is the base's own, and on a thread of a scheduler (or
    /// virtual time advanced outside any span) it sees none (its span is a root).
    @Test(arguments: TracedKind.allCases)
    func noContextAtTheCallMeansNoneInTheAction(_ kind: TracedKind) async throws {
        try await observe(kind) { scheduler, probe, sightings in
            #expect(ServiceContext.current == nil)
            wrapper(scheduler).schedule { probe.record() }
            // Not inside a span: with no context at the call the action runs as the base runs it,
            // which for the test scheduler is inside whatever context advances it.
            scheduler.drive()
            let seen = await sightings.next(1)
            try #require(seen.count == 1)
            #expect(seen[0].span.parentSpanID == nil)
        }
    }

    /// The control: the base alone loses the context (what the wrapper is for). A deferred
    /// scheduler's action sees none; the test scheduler's sees the context of whoever advances it.
    @Test(arguments: TracedKind.deferred + [.test])
    func theBaseAloneDoesNotCarryTheContext(_ kind: TracedKind) async throws {
        try await observe(kind) { scheduler, probe, sightings in
            let request = probe.inSpan("request") { scheduler.base.schedule { probe.record() } }
            drive(scheduler, probe)
            let seen = await sightings.next(1)
            try #require(seen.count == 1)
            #expect(seen[0].span.parentSpanID != request.spanID)
        }
    }

    /// A loop that shuts down disposes a pending timer and tells its handler, in the context of the
    /// call that armed it (how a sleep or a timeout learns of the shutdown).
    @Test(arguments: [TracedKind.loop, .loopCallerThread, .loopAdopted])
    func aShutdownReachesTheHandlerInTheSchedulingContext(_ kind: TracedKind) async throws {
        try await observe(kind) { scheduler, probe, sightings in
            let traced = scheduler.dateBase.propagatingServiceContext()
            let request = probe.inSpan("request") {
                traced.schedule(after: .seconds(3600), leeway: .zero, handler: ProbeHandler(probe: probe))
            }
            await (scheduler.base as! LoopScheduler).shutdown()
            let seen = await sightings.next(1)
            try #require(seen.count == 1)
            #expect(seen[0].name == "cancelled")
            expectChild(seen[0], of: request, "timerCancelledByScheduler")
        }
    }
}
#endif
