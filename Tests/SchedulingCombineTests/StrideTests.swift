#if OpenCombine
import Foundation
import OpenCombine
import Scheduling
import SchedulingCombine
import LoopSchedulingTestSupport
import Testing

/// The time type's arithmetic: conversions, literals and saturation.
@Suite("Combine time type")
struct StrideTests {
    typealias Time = CombineScheduler<TestScheduler>.SchedulerTimeType
    typealias Stride = Time.Stride

    @Test("SchedulerTimeIntervalConvertible conversions")
    func conversions() {
        #expect(Stride.seconds(2).nanoseconds == 2_000_000_000)
        #expect(Stride.seconds(0.25).nanoseconds == 250_000_000)
        #expect(Stride.milliseconds(3).nanoseconds == 3_000_000)
        #expect(Stride.microseconds(-7).nanoseconds == -7_000)
        #expect(Stride.nanoseconds(9).nanoseconds == 9)
        #expect(Stride(.milliseconds(5)) == .milliseconds(5))
        #expect(Stride.milliseconds(5).duration == .milliseconds(5))
    }

    @Test("Conversions saturate instead of trapping")
    func saturatingConversions() {
        #expect(Stride.seconds(Int.max).nanoseconds == .max)
        #expect(Stride.seconds(Int.min).nanoseconds == .min)
        #expect(Stride.milliseconds(Int.max).nanoseconds == .max)
        #expect(Stride.microseconds(Int.min).nanoseconds == .min)
        #expect(Stride.seconds(Double.infinity).nanoseconds == .max)
        #expect(Stride.seconds(-Double.infinity).nanoseconds == .min)
        #expect(Stride.seconds(Double.nan) == .zero)
        #expect(Stride(.seconds(Int64.max) * 2).nanoseconds == .max)
        #expect(Stride(exactly: Int64.max) == nil)
        #expect(Stride(exactly: 3) == .seconds(3))
    }

    @Test("Fractional seconds round up: a delay is never shorter than asked")
    func roundsUp() {
        #expect(Stride.seconds(1e-10).nanoseconds == 1)
    }

    @Test("Literals are seconds, and multiplying by a literal scales")
    func literals() {
        let half: Stride = 0.5
        let two: Stride = 2
        #expect(half == .milliseconds(500))
        #expect(two == .seconds(2))
        #expect(Stride.milliseconds(300) * 2 == .milliseconds(600))
        var stride = Stride.seconds(3)
        stride *= 0.5
        #expect(stride == .milliseconds(1500))
        #expect((Stride.seconds(Int.max) * 3).nanoseconds == .max)
        #expect((Stride.seconds(Int.max) * -3).nanoseconds == .min)
    }

    @Test("Sums, differences, negation and magnitude saturate")
    func arithmetic() {
        let max = Stride(nanoseconds: .max)
        let min = Stride(nanoseconds: .min)
        #expect((max + .nanoseconds(1)) == max)
        #expect((min - .nanoseconds(1)) == min)
        #expect(-min == max)
        #expect(min.magnitude == max)
        #expect(Stride.seconds(-3).magnitude == .seconds(3))
        var value = Stride.seconds(1)
        value += .seconds(1)
        value -= .milliseconds(500)
        #expect(value == .milliseconds(1500))
        value.negate()
        #expect(value == .milliseconds(-1500))
        #expect(Stride.seconds(-1) < .zero)
    }

    @Test("Instants stride and saturate at the ends of time")
    func instants() {
        let start = Time(nanoseconds: 100)
        #expect(start.advanced(by: .nanoseconds(50)) == Time(nanoseconds: 150))
        #expect(start.distance(to: Time(nanoseconds: 40)) == .nanoseconds(-60))
        #expect(Time(nanoseconds: .max - 1).advanced(by: .seconds(1)).nanoseconds == .max)
        #expect(Time(nanoseconds: .min).distance(to: Time(nanoseconds: .max)).nanoseconds == .max)
        #expect(Time(nanoseconds: .max).distance(to: Time(nanoseconds: .min)).nanoseconds == .min)
        #expect(Time(nanoseconds: 1) < Time(nanoseconds: 2))
    }

    @Test("Time and stride round-trip through Codable")
    func codable() throws {
        let time = Time(nanoseconds: 123_456_789)
        let data = try JSONEncoder().encode([time])
        #expect(try JSONDecoder().decode([Time].self, from: data) == [time])
        let stride = Stride.milliseconds(-42)
        #expect(try JSONDecoder().decode([Stride].self, from: JSONEncoder().encode([stride])) == [stride])
    }
}

/// Bad periodic input stops the program, naming the method and the value.
@Suite("Combine crash tests")
struct CombineCrashTests {
    static func expectMessage(_ result: ExitTest.Result?, contains text: String) {
        guard let result else { return }
        let output = String(decoding: result.standardErrorContent, as: UTF8.self)
        #expect(output.contains(text), "stderr did not say \"\(text)\":\n\(output)")
    }

    @Test("A zero interval stops the program")
    func zeroInterval() async {
        let result = await ExitTests.serially {
            await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                startWatchdog()
                let scheduler = TestScheduler().combine
                _ = scheduler.schedule(after: scheduler.now, interval: .zero, tolerance: .zero) {}
            }
        }
        Self.expectMessage(
            result,
            contains: "CombineScheduler.schedule(after:interval:tolerance:options:): interval must be positive (got 0 ns)"
        )
    }

    @Test("A negative tolerance stops the program")
    func negativeTolerance() async {
        let result = await ExitTests.serially {
            await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                startWatchdog()
                let scheduler = TestScheduler().combine
                _ = scheduler.schedule(after: scheduler.now, interval: .seconds(1), tolerance: .nanoseconds(-5)) {}
            }
        }
        Self.expectMessage(
            result,
            contains:
                "CombineScheduler.schedule(after:interval:tolerance:options:): tolerance must not be negative (got -5 ns)"
        )
    }
}
#endif
