/// A pair of clocks a scheduler reads: injectable at `package` level so tests can step the wall
/// clock or freeze time.
package protocol ClockSource: Sendable {
    /// Monotonic nanoseconds; never goes backwards.
    func monotonicNow() -> Int64
    /// Wall-clock nanoseconds since 1970; may be stepped either way.
    func wallNow() -> Int64
}

/// The system's clocks.
package struct SystemClock: ClockSource {
    package init() {}
    package func monotonicNow() -> Int64 { Nanoseconds.monotonicNow() }
    package func wallNow() -> Int64 { Nanoseconds.wallNow() }
}
