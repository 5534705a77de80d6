#if OpenCombine
import OpenCombine
import Scheduling

extension CombineScheduler {
    /// An instant of the base scheduler's monotonic (or virtual) clock, in nanoseconds.
    ///
    /// Arithmetic saturates: advancing past the end of time stays at the end of time (a timer
    /// there never fires), as every deadline in this package does.
    public struct SchedulerTimeType: Strideable, Hashable, Codable, Sendable {
        /// Nanoseconds of the base scheduler's monotonic clock (virtual on a `TestScheduler`).
        public var nanoseconds: Int64

        /// The instant `nanoseconds` on the base scheduler's clock.
        public init(nanoseconds: Int64) {
            self.nanoseconds = nanoseconds
        }

        /// The stride from this instant to `other`, saturating.
        public func distance(to other: Self) -> Stride {
            Stride(nanoseconds: Nanoseconds.subtracting(other.nanoseconds, nanoseconds))
        }

        /// This instant moved by `stride`, saturating.
        public func advanced(by stride: Stride) -> Self {
            Self(nanoseconds: Nanoseconds.adding(nanoseconds, stride.nanoseconds))
        }
    }
}

extension CombineScheduler.SchedulerTimeType {
    /// A signed span of the base scheduler's time, in nanoseconds.
    ///
    /// Literals are seconds (`0.5` is half a second), as in Combine's `DispatchQueue` and
    /// `RunLoop` schedulers; so multiplication treats both sides as seconds (`stride * 2` doubles
    /// `stride`). Every operation saturates at `Int64.min`/`Int64.max` nanoseconds instead of
    /// trapping; conversions round toward zero except `seconds(_: Double)`, which rounds up so a
    /// delay is never shorter than asked.
    public struct Stride: SchedulerTimeIntervalConvertible, Comparable, SignedNumeric,
        ExpressibleByFloatLiteral, Hashable, Codable, Sendable
    {
        /// Whole seconds, as in Combine's own schedulers.
        public typealias IntegerLiteralType = Int
        /// Seconds, as in Combine's own schedulers.
        public typealias FloatLiteralType = Double
        /// The absolute value is a stride too.
        public typealias Magnitude = Self

        /// The span in nanoseconds.
        public var nanoseconds: Int64

        /// A span of `nanoseconds`.
        public init(nanoseconds: Int64) {
            self.nanoseconds = nanoseconds
        }

        /// `duration`, saturating (sub-nanosecond remainders round up).
        public init(_ duration: Duration) {
            nanoseconds = Nanoseconds.of(duration)
        }

        /// The span as a `Duration`.
        public var duration: Duration { .nanoseconds(nanoseconds) }

        /// `value` seconds.
        public init(integerLiteral value: Int) {
            self = .seconds(value)
        }

        /// `value` seconds.
        public init(floatLiteral value: Double) {
            self = .seconds(value)
        }

        /// `source` seconds, or nil if it does not fit.
        public init?<T: BinaryInteger>(exactly source: T) {
            guard let seconds = Int64(exactly: source) else { return nil }
            let (nanoseconds, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
            if overflow { return nil }
            self.nanoseconds = nanoseconds
        }

        /// The absolute value (`Int64.min` nanoseconds saturates to `Int64.max`).
        public var magnitude: Self {
            Self(nanoseconds: nanoseconds == .min ? .max : abs(nanoseconds))
        }

        /// `s` seconds, saturating.
        public static func seconds(_ s: Int) -> Self {
            Self(nanoseconds: Nanoseconds.multiplying(Int64(s), 1_000_000_000))
        }

        /// `s` seconds, saturating, rounded up to the nanosecond; NaN is zero.
        public static func seconds(_ s: Double) -> Self {
            if s.isNaN { return .zero }
            return Self(nanoseconds: Nanoseconds.fromSeconds(s))
        }

        /// `ms` milliseconds, saturating.
        public static func milliseconds(_ ms: Int) -> Self {
            Self(nanoseconds: Nanoseconds.multiplying(Int64(ms), 1_000_000))
        }

        /// `us` microseconds, saturating.
        public static func microseconds(_ us: Int) -> Self {
            Self(nanoseconds: Nanoseconds.multiplying(Int64(us), 1_000))
        }

        /// `ns` nanoseconds.
        public static func nanoseconds(_ ns: Int) -> Self {
            Self(nanoseconds: Int64(ns))
        }

        /// Zero.
        public static var zero: Self { Self(nanoseconds: 0) }

        /// Orders spans by length, negative first.
        public static func < (lhs: Self, rhs: Self) -> Bool {
            lhs.nanoseconds < rhs.nanoseconds
        }

        /// The sum, saturating.
        public static func + (lhs: Self, rhs: Self) -> Self {
            Self(nanoseconds: Nanoseconds.adding(lhs.nanoseconds, rhs.nanoseconds))
        }

        /// The difference, saturating.
        public static func - (lhs: Self, rhs: Self) -> Self {
            Self(nanoseconds: Nanoseconds.subtracting(lhs.nanoseconds, rhs.nanoseconds))
        }

        /// The product with both sides in seconds (so `stride * 2` doubles it), saturating,
        /// rounded toward zero.
        public static func * (lhs: Self, rhs: Self) -> Self {
            let product = Int128(lhs.nanoseconds) * Int128(rhs.nanoseconds) / 1_000_000_000
            if product >= Int128(Int64.max) { return Self(nanoseconds: .max) }
            if product <= Int128(Int64.min) { return Self(nanoseconds: .min) }
            return Self(nanoseconds: Int64(product))
        }

        /// Adds in place, saturating.
        public static func += (lhs: inout Self, rhs: Self) {
            lhs = lhs + rhs
        }

        /// Subtracts in place, saturating.
        public static func -= (lhs: inout Self, rhs: Self) {
            lhs = lhs - rhs
        }

        /// Multiplies in place (see ``*(_:_:)``).
        public static func *= (lhs: inout Self, rhs: Self) {
            lhs = lhs * rhs
        }

        /// The negation, saturating (`-Int64.min` is `Int64.max`).
        public static prefix func - (operand: Self) -> Self {
            Self(nanoseconds: operand.nanoseconds == .min ? .max : -operand.nanoseconds)
        }

        /// Negates in place, saturating.
        public mutating func negate() {
            self = -self
        }
    }
}
#endif
