/// The fixed-rate grid of a periodic timer, `origin + k·interval`: the one rule every scheduler
/// (loop, Dispatch, test) uses to place ticks, so they cannot disagree on drift or on skipping.
///
/// Tick k is due at `origin + k·interval`; no drift accumulates, because a deadline is computed
/// from the grid, never from when the previous tick ran. A tick that ran late skips every grid
/// point already past: the next tick is due at the first grid point after the late one's end, so
/// ticks never run back to back to catch up (rule 4.5). All arithmetic saturates.
package struct PeriodicGrid: Sendable, Equatable {
    /// Where tick 0 stands, in the clock's nanoseconds.
    package var origin: Int64
    /// The period in nanoseconds; positive (`PeriodicSchedule` checks it).
    package let interval: Int64

    package init(origin: Int64, interval: Int64) {
        assert(interval > 0, "PeriodicGrid: the interval must be positive (got \(interval) ns)")
        self.origin = origin
        self.interval = interval
    }

    /// When tick `index` is due, saturating.
    package func deadline(ofTick index: Int64) -> Int64 {
        Int64(clamping: Int128(origin) + Int128(index) * Int128(interval))
    }

    /// After tick `index` ran and the clock reads `now`: the next tick's index and deadline, and how
    /// many grid points were skipped because they had already passed.
    package func next(after index: Int64, now: Int64) -> (index: Int64, deadline: Int64, skipped: Int64) {
        var next = index &+ 1
        if deadline(ofTick: next) <= now {
            // The first grid point strictly after `now`, counted in 128 bits: `now - origin` can
            // exceed Int64 (an origin near Int64.min), and a saturated difference would land the
            // "next" point in the past, a stream of catch-up ticks.
            let passed = (Int128(now) - Int128(origin)) / Int128(interval)
            next = Int64(clamping: passed + 1)
        }
        return (next, deadline(ofTick: next), max(0, next &- index &- 1))
    }

    /// The latest grid point not after `now`, or `origin` itself when it is later: where a
    /// periodic timer whose start date has passed stands now (its first tick runs at once, the next
    /// one interval later, on the grid of its date). Saturating: a start date too far back to count
    /// grid points from (`Date.distantPast`) still lands within one interval of `now`, so no
    /// arithmetic downstream can overflow into a stream of past deadlines.
    package static func latestPoint(origin: Int64, interval: Int64, notAfter now: Int64) -> Int64 {
        guard origin < now else { return origin }
        return now - Nanoseconds.subtracting(now, origin) % interval
    }

    /// The number of whole grid points between `origin` and `now` (0 when `now` is not later).
    package static func pointsPassed(since origin: Int64, interval: Int64, now: Int64) -> Int64 {
        guard origin < now else { return 0 }
        return Nanoseconds.subtracting(now, origin) / interval
    }

    /// The grid of a wall-clock periodic timer whose first tick fires `lateness` (wall-clock
    /// nanoseconds, not negative) after its date, moved to the monotonic clock read at
    /// `monotonicNow`: it stands at the latest grid point of its date not after now, as tick 0 (a
    /// date long past must not turn into a stream of past deadlines), and the points between count
    /// as `missed`. Every scheduler with wall-clock periodic timers moves them this way.
    package func leavingWallClock(lateness: Int64, monotonicNow: Int64) -> (grid: PeriodicGrid, missed: Int64) {
        let grid = PeriodicGrid(origin: Nanoseconds.subtracting(monotonicNow, lateness % interval), interval: interval)
        return (grid, lateness / interval)
    }
}
