import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Saturating nanosecond arithmetic and clock readings shared by every scheduler.
///
/// Deadlines are `Int64` nanoseconds. Every conversion and sum saturates at `Int64.max` (which
/// means "never") or `Int64.min`, as NIO's `NIODeadline` and libuv's timeouts clamp: a huge
/// delay never traps.
package enum Nanoseconds {
    /// The deadline that never comes.
    package static let never = Int64.max

    /// `duration` in nanoseconds, saturating at `Int64.min`/`Int64.max`; sub-nanosecond
    /// remainders round up so a timer is never early by a fraction of a nanosecond.
    ///
    /// The one conversion from `Duration` every scheduler uses. It reads the 128-bit attosecond
    /// count, so it never traps: `Duration.components` does, past `Int64` seconds, which valid
    /// durations such as `.seconds(Int64.max) * 2` reach.
    @inlinable
    package static func of(_ duration: Duration) -> Int64 {
        let attoseconds = duration.attoseconds
        if attoseconds >= 0 {
            let high = UInt64(truncatingIfNeeded: attoseconds >> 64)
            let low = UInt64(truncatingIfNeeded: attoseconds)
            if high == 0 {
                // Up to 18 s, most schedule calls: a 64-bit division by a constant, which compiles
                // to a multiplication; the wider division below is a runtime call (`__udivti3`).
                let quotient = low / 1_000_000_000
                return Int64(quotient) + (low - quotient &* 1_000_000_000 > 0 ? 1 : 0)
            }
            // From 10^9 × 2^64 attoseconds on, the quotient needs more than 64 bits. One
            // 128-by-64-bit division, not the two that `/` and `%` on `Int128` make.
            guard high < 1_000_000_000 else { return .max }
            let (quotient, remainder) = UInt64(1_000_000_000).dividingFullWidth((high: high, low: low))
            guard quotient < UInt64(Int64.max) else { return .max }
            return Int64(quotient) + (remainder > 0 ? 1 : 0)
        }
        var nanoseconds = attoseconds / 1_000_000_000
        if attoseconds % 1_000_000_000 > 0 { nanoseconds += 1 }
        if nanoseconds >= Int128(Int64.max) { return .max }
        if nanoseconds <= Int128(Int64.min) { return .min }
        return Int64(nanoseconds)
    }

    /// A delay as a non-negative nanosecond count: negative delays mean "now" (rule 4.9).
    @inlinable
    package static func delay(_ duration: Duration) -> Int64 {
        max(0, of(duration))
    }

    /// `a + b`, saturating.
    @inlinable
    package static func adding(_ a: Int64, _ b: Int64) -> Int64 {
        let (sum, overflow) = a.addingReportingOverflow(b)
        if overflow { return b > 0 ? .max : .min }
        return sum
    }

    /// `a - b`, saturating.
    @inlinable
    package static func subtracting(_ a: Int64, _ b: Int64) -> Int64 {
        let (difference, overflow) = a.subtractingReportingOverflow(b)
        if overflow { return b < 0 ? .max : .min }
        return difference
    }

    /// `a * b`, saturating.
    package static func multiplying(_ a: Int64, _ b: Int64) -> Int64 {
        let (product, overflow) = a.multipliedReportingOverflow(by: b)
        if overflow { return (a < 0) != (b < 0) ? .min : .max }
        return product
    }

    /// Nanoseconds from 1970 to 2001, Foundation's reference date.
    static let referenceDate: Int64 = 978_307_200_000_000_000

    /// `date` in nanoseconds since 1970 (the one epoch of every scheduler, ``TestScheduler``'s
    /// virtual clock included), saturating; rounds up.
    ///
    /// Read from the interval `Date` stores (since 2001) and shifted in integers: going through
    /// `timeIntervalSince1970` would add a rounding of its own (about 100 ns today).
    package static func sinceEpoch(_ date: Date) -> Int64 {
        let sinceReferenceDate = fromSeconds(date.timeIntervalSinceReferenceDate)
        if sinceReferenceDate == .max || sinceReferenceDate == .min { return sinceReferenceDate }
        return adding(sinceReferenceDate, referenceDate)
    }

    /// The `Date` `nanosecondsSinceEpoch` after 1970: the inverse of ``sinceEpoch(_:)`` up to the
    /// precision of a `Date`.
    package static func date(sinceEpoch nanosecondsSinceEpoch: Int64) -> Date {
        Date(timeIntervalSinceReferenceDate: Double(subtracting(nanosecondsSinceEpoch, referenceDate)) / 1e9)
    }

    /// `seconds` in nanoseconds, saturating, rounded up. The caller has checked it is finite.
    package static func fromSeconds(_ seconds: Double) -> Int64 {
        let nanoseconds = (seconds * 1e9).rounded(.up)
        if nanoseconds >= 9.2e18 { return .max }
        if nanoseconds <= -9.2e18 { return .min }
        return Int64(nanoseconds)
    }

    /// The monotonic clock (`CLOCK_MONOTONIC`, the clock of Dispatch's `DispatchTime` and of a
    /// monotonic timerfd), in nanoseconds.
    package static func monotonicNow() -> Int64 {
        read(CLOCK_MONOTONIC)
    }

    /// The wall clock (`CLOCK_REALTIME`), in nanoseconds since 1970.
    package static func wallNow() -> Int64 {
        read(CLOCK_REALTIME)
    }

    private static func read(_ clock: clockid_t) -> Int64 {
        var now = timespec()
        let rc = clock_gettime(clock, &now)
        precondition(rc == 0, "clock_gettime(\(clock)) failed: errno \(errno)")
        return Int64(now.tv_sec) &* 1_000_000_000 &+ Int64(now.tv_nsec)
    }
}
