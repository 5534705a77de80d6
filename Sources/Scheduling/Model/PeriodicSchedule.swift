import Foundation

/// When a timer first fires: a delay on the monotonic clock, or a date on the wall clock.
public enum TimerStart: Sendable, Equatable {
    /// No earlier than this long after the `schedule` call, by the monotonic clock (a zero or
    /// negative delay: as soon as possible; a huge one saturates and stays pending).
    case after(Duration)
    /// No earlier than the moment the wall clock reaches this date, also when the clock is stepped
    /// after the call (a past date: as soon as possible).
    case at(Date)
}

/// A fixed-rate periodic timer: its first tick at ``start``, then every ``interval`` on the grid
/// `first + k·interval`, each tick allowed to start up to ``leeway`` late so that wake-ups can
/// be coalesced. Missed ticks are skipped, never run back to back (<doc:BehaviourContract>,
/// rule 5).
///
/// Checked once, here, for every scheduler: a non-positive interval, a negative leeway or a
/// non-finite start date stops the program with a message naming the method that was called, the
/// parameter and the value (rule 9, bad input), in every build configuration. Schedulers receive
/// it checked.
public struct PeriodicSchedule: Sendable, Equatable {
    /// When the first tick is due.
    public let start: TimerStart
    /// The distance between grid points; positive.
    public let interval: Duration
    /// How late a tick may start; zero or more.
    public let leeway: Duration

    /// A checked schedule. `method` names the public call for the messages, such as
    /// `QueueScheduler.schedule(after:repeatingEvery:leeway:)`; it is built only on failure.
    package init(
        _ start: TimerStart,
        interval: Duration,
        leeway: Duration,
        method: @autoclosure () -> String,
        file: StaticString = #fileID,
        line: UInt = #line
    ) {
        if case .at(let date) = start { BadInput.checkDate(date, method: method(), file: file, line: line) }
        BadInput.checkPositive(interval, parameter: "repeatingEvery", method: method(), file: file, line: line)
        BadInput.checkLeeway(leeway, method: method(), file: file, line: line)
        self.start = start
        self.interval = interval
        self.leeway = leeway
    }

    /// The interval in nanoseconds (positive, saturated).
    package var intervalNanoseconds: Int64 { Nanoseconds.of(interval) }
    /// The leeway in nanoseconds (zero or more, saturated).
    package var leewayNanoseconds: Int64 { Nanoseconds.of(leeway) }
}
