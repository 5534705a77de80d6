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

    @Test("Non-negative durations (one 64-bit division) agree with 128-bit arithmetic, at the word edges too")
    func agreesWithWideArithmetic() {
        func reference(_ attoseconds: Int128) -> Int64 {
            var nanoseconds = attoseconds / 1_000_000_000
            if attoseconds % 1_000_000_000 > 0 { nanoseconds += 1 }
            if nanoseconds >= Int128(Int64.max) { return .max }
            if nanoseconds <= Int128(Int64.min) { return .min }
            return Int64(nanoseconds)
        }
        var random = SystemRandomNumberGenerator()
        let maxNanos = Int128(Int64.max) * 1_000_000_000
        var samples: [Int128] = [
            0, 1, 999_999_999, 1_000_000_000, Int128(UInt64.max), Int128(UInt64.max) + 1,
            maxNanos - 1_000_000_001, maxNanos - 1_000_000_000, maxNanos - 1, maxNanos, maxNanos + 1,
            Int128(1_000_000_000) << 64 - 1, Int128(1_000_000_000) << 64, Int128.max,
        ]
        for _ in 0..<10_000 {
            let bits = Int.random(in: 0...127, using: &random)
            let value = Int128(UInt64.random(in: 0...UInt64.max, using: &random)) << 64
                | Int128(UInt64.random(in: 0...UInt64.max, using: &random))
            samples.append(bits == 127 ? value & Int128.max : value & (Int128(1) << bits - 1))
        }
        for attoseconds in samples {
            let duration = Duration(attoseconds: attoseconds)
            #expect(Nanoseconds.of(duration) == reference(attoseconds), "\(attoseconds) attoseconds")
        }
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
