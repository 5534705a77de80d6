import Scheduling
import Testing

@Suite("PeriodicGrid: the one periodic-grid rule")
struct PeriodicGridTests {
    @Test("Tick k is due at origin + k·interval")
    func deadlines() {
        let grid = PeriodicGrid(origin: 1_000, interval: 100)
        #expect(grid.deadline(ofTick: 0) == 1_000)
        #expect(grid.deadline(ofTick: 3) == 1_300)
    }

    @Test("An on-time tick is followed by the next grid point, nothing skipped")
    func nextOnTime() {
        let grid = PeriodicGrid(origin: 1_000, interval: 100)
        let next = grid.next(after: 0, now: 1_010)
        #expect(next.index == 1)
        #expect(next.deadline == 1_100)
        #expect(next.skipped == 0)
    }

    @Test("A late tick skips every grid point already past: the next one is strictly after now")
    func nextSkips() {
        let grid = PeriodicGrid(origin: 1_000, interval: 100)
        // Tick 0 ended at 1 350: points 1…3 (1 100, 1 200, 1 300) passed.
        let next = grid.next(after: 0, now: 1_350)
        #expect(next.index == 4)
        #expect(next.deadline == 1_400)
        #expect(next.skipped == 3)
    }

    @Test("Ending exactly on a grid point skips that point too: ticks never run back to back")
    func nextOnAGridPoint() {
        let grid = PeriodicGrid(origin: 1_000, interval: 100)
        let next = grid.next(after: 0, now: 1_100)
        #expect(next.index == 2)
        #expect(next.deadline == 1_200)
        #expect(next.skipped == 1)
    }

    @Test("No drift: a tick that ran late does not move the grid")
    func noDrift() {
        let grid = PeriodicGrid(origin: 0, interval: 100)
        var index: Int64 = 0
        var deadlines: [Int64] = []
        for late in [30, 99, 0, 50] as [Int64] {
            let next = grid.next(after: index, now: grid.deadline(ofTick: index) + late)
            index = next.index
            deadlines.append(next.deadline)
        }
        #expect(deadlines == [100, 200, 300, 400])
    }

    @Test("Deadlines saturate at Int64.max (never) instead of overflowing")
    func saturation() {
        let huge = PeriodicGrid(origin: 1_000, interval: .max)
        #expect(huge.deadline(ofTick: 1) == .max)
        #expect(huge.next(after: 0, now: 2_000).deadline == .max)
        let late = PeriodicGrid(origin: .max - 10, interval: 100)
        #expect(late.deadline(ofTick: 1) == .max)
        #expect(late.next(after: 0, now: .max - 5).deadline == .max)
        let early = PeriodicGrid(origin: .min, interval: 1_000_000)
        let next = early.next(after: 0, now: 0)
        #expect(next.deadline > 0 && next.deadline <= 1_000_000, "a grid from Int64.min still lands after now")
    }

    @Test("latestPoint: the latest grid point not after now, or a future origin itself")
    func latestPoint() {
        #expect(PeriodicGrid.latestPoint(origin: 100, interval: 30, notAfter: 200) == 190)
        #expect(PeriodicGrid.latestPoint(origin: 100, interval: 30, notAfter: 190) == 190)
        #expect(PeriodicGrid.latestPoint(origin: 250, interval: 30, notAfter: 200) == 250)
        #expect(PeriodicGrid.latestPoint(origin: 200, interval: 30, notAfter: 200) == 200)
    }

    @Test("latestPoint from distantPast or Int64.min stays within one interval of now")
    func latestPointSaturates() {
        let now: Int64 = 1_000_000_000_000
        let point = PeriodicGrid.latestPoint(origin: .min, interval: 5_000_000, notAfter: now)
        #expect(point <= now && point > now - 5_000_000)
        let hugeInterval = PeriodicGrid.latestPoint(origin: .min, interval: .max, notAfter: now)
        #expect(hugeInterval <= now)
    }

    @Test("pointsPassed counts whole grid points between origin and now")
    func pointsPassed() {
        #expect(PeriodicGrid.pointsPassed(since: 100, interval: 30, now: 200) == 3)
        #expect(PeriodicGrid.pointsPassed(since: 300, interval: 30, now: 200) == 0)
        #expect(PeriodicGrid.pointsPassed(since: .min, interval: .max, now: .max) == 1)
    }
}
