import Foundation
import Scheduling
import Testing

@Suite("Nanoseconds.of: the one saturating Duration conversion")
struct NanosecondsOfTests {
    /// Valid durations past `Int64` seconds, where `Duration.components` traps.
    static let beyondInt64Seconds: [Duration] = [
        Duration(secondsComponent: .max, attosecondsComponent: .max),
        .seconds(Int64.max) * 2,
    ]

    @Test("Durations past Int64 seconds saturate at Int64.max instead of trapping", arguments: beyondInt64Seconds)
    func hugePositive(duration: Duration) {
        #expect(Nanoseconds.of(duration) == .max)
        #expect(Nanoseconds.delay(duration) == .max)
    }

    @Test("Their negatives saturate at Int64.min; as a delay they mean now", arguments: beyondInt64Seconds)
    func hugeNegative(duration: Duration) {
        #expect(Nanoseconds.of(.zero - duration) == .min)
        #expect(Nanoseconds.delay(.zero - duration) == 0)
    }

    @Test("Just inside and just past the Int64 nanosecond range")
    func edges() {
        #expect(Nanoseconds.of(.nanoseconds(Int64.max)) == .max)
        #expect(Nanoseconds.of(.nanoseconds(Int64.max - 1)) == .max - 1)
        #expect(Nanoseconds.of(.nanoseconds(Int64.min)) == .min)
        #expect(Nanoseconds.of(.nanoseconds(Int64.min + 1)) == .min + 1)
        #expect(Nanoseconds.of(.seconds(10)) == 10_000_000_000)
        #expect(Nanoseconds.of(.zero) == 0)
    }

    @Test("Sub-nanosecond remainders round up, so a timer is never early by a fraction")
    func subNanosecondRounding() {
        #expect(Nanoseconds.of(Duration(secondsComponent: 0, attosecondsComponent: 1)) == 1)
        #expect(Nanoseconds.of(Duration(secondsComponent: 0, attosecondsComponent: 999_999_999)) == 1)
        #expect(Nanoseconds.of(Duration(secondsComponent: 0, attosecondsComponent: 1_000_000_000)) == 1)
        #expect(Nanoseconds.of(Duration(secondsComponent: 0, attosecondsComponent: 1_000_000_001)) == 2)
        #expect(Nanoseconds.of(Duration(secondsComponent: 1, attosecondsComponent: 1)) == 1_000_000_001)
        // Up is towards +∞: a negative fraction truncates towards zero (it only means "now" anyway).
        #expect(Nanoseconds.of(Duration(secondsComponent: 0, attosecondsComponent: -1)) == 0)
        #expect(Nanoseconds.of(Duration(secondsComponent: 0, attosecondsComponent: -1_000_000_001)) == -1)
    }

    @Test("Every scheduler counts from 1970: a date and back")
    func oneEpoch() {
        #expect(Nanoseconds.sinceEpoch(Date(timeIntervalSince1970: 0)) == 0)
        #expect(Nanoseconds.sinceEpoch(Date(timeIntervalSinceReferenceDate: 0)) == 978_307_200_000_000_000)
        #expect(Nanoseconds.sinceEpoch(Date(timeIntervalSinceReferenceDate: 0.5)) == 978_307_200_500_000_000)
        #expect(Nanoseconds.date(sinceEpoch: 978_307_200_500_000_000) == Date(timeIntervalSinceReferenceDate: 0.5))
        let scheduler = TestScheduler(now: Date(timeIntervalSince1970: 5))
        #expect(scheduler.virtualNanoseconds == 5_000_000_000, "the test scheduler's virtual clock counts from 1970")
        scheduler.advance(by: .milliseconds(1))
        #expect(scheduler.virtualNanoseconds == 5_001_000_000)
        #expect(abs(scheduler.now.timeIntervalSince1970 - 5.001) < 1e-6)
    }
}
