import Scheduling
import Synchronization

/// The timer heaps: inserting, removing, firing, arming the driver, giving memory back.
extension LoopCore {
    // MARK: Timers (loop thread)

    func insertTimer(_ entry: LoopTimer) {
        entry.sequence = nextSequence
        nextSequence &+= 1
        if entry.isWall { wallTimers.insert(entry) } else { timers.insert(entry) }
    }

    func removeTimer(_ entry: LoopTimer) {
        if entry.isWall { wallTimers.remove(entry) } else { timers.remove(entry) }
    }

    /// Fires every timer due by the clocks read once now. Entries inserted during this pass (a
    /// periodic timer re-armed, a zero-delay timer scheduled by a timer) wait for the next pass, so
    /// a timer that keeps re-arming itself cannot starve the others (libuv#4245).
    func fireDueTimers() -> Bool {
        // Once shutdown began no timer starts, due or not: shutdown disposes them all.
        guard accepting.load(ordering: .relaxed) else { return false }
        let limit = nextSequence
        var fired = false
        if let first = timers.firstKey {
            let now = monotonicNow()
            if first.deadline <= now {
                while let key = timers.firstKey, key.deadline <= now, key.sequence < limit,
                    accepting.load(ordering: .relaxed)
                {
                    let top = timers.removeFirst()!
                    fire(top, lateness: Nanoseconds.subtracting(now, key.deadline), wallLateness: nil)
                    fired = true
                }
            }
        }
        if let first = wallTimers.firstKey {
            let now = wallNow()
            if first.deadline <= now {
                while let key = wallTimers.firstKey, key.deadline <= now, key.sequence < limit,
                    accepting.load(ordering: .relaxed)
                {
                    let top = wallTimers.removeFirst()!
                    let lateness = Nanoseconds.subtracting(now, key.deadline)
                    fire(top, lateness: lateness, wallLateness: lateness)
                    fired = true
                }
            }
        }
        return fired
    }

    func fire(_ entry: LoopTimer, lateness: Int64, wallLateness: Int64?) {
        guard entry.isPeriodic else {
            guard ActionLifecycle.claimRun(entry.state) else {
                stats.disposedBeforeRun += 1
                return
            }
            let action = entry.action.take()
            stats.recordFire(lateness: lateness)
            action?()
            return
        }
        let periodic = unsafeDowncast(entry, to: PeriodicLoopTimer.self)
        guard ActionLifecycle.claimTick(periodic.state) else {
            stats.disposedBeforeRun += 1
            return
        }
        if let wallLateness {
            // The first tick of an `at:` periodic timer: from here on the grid is monotonic. It
            // stands at the latest grid point of its date not after now (a date long past must not
            // push the arithmetic into a stream of past deadlines), and reports the points before.
            let interval = periodic.interval
            periodic.origin = monotonicNow() - wallLateness % interval
            periodic.missedTicks = Int(clamping: wallLateness / interval)
            periodic.isWall = false
        }
        stats.recordFire(lateness: lateness)
        periodic.tick?(periodic.missedTicks)
        if ActionLifecycle.endTick(periodic.state) {
            periodic.advance(after: monotonicNow())
            insertTimer(periodic)
        } else {
            periodic.releaseAction()
        }
    }

    /// Arms the driver for the earliest deadline, unless it is already armed no later than that.
    ///
    /// Cancelling the first timer does not disarm (a cancel-heavy server would pay a syscall per
    /// cancel): the driver fires once for nothing and is re-armed then. The first timer's leeway
    /// delays the wake-up, but never past the deadline of any other timer (`secondDeadline`).
    /// Wall-clock timers are converted to the monotonic clock, re-checked at least once a second.
    func armDriver() {
        var target = Nanoseconds.never
        if let first = timers.firstKey, first.deadline != Nanoseconds.never {
            target = first.deadline
            let leeway = timers.first!.leeway
            if leeway > 0 {
                target = min(Nanoseconds.adding(first.deadline, leeway), timers.secondDeadline ?? .max)
            }
        }
        var now: Int64?
        if let first = wallTimers.firstKey, first.deadline != Nanoseconds.never {
            let monotonicNow = self.monotonicNow()
            now = monotonicNow
            let remaining = min(Nanoseconds.subtracting(first.deadline, wallNow()), 1_000_000_000)
            target = min(target, Nanoseconds.adding(monotonicNow, remaining))
        }
        guard target != Nanoseconds.never else { return }
        let monotonicNow = now ?? self.monotonicNow()
        if target <= monotonicNow {
            handles.startIdle()
            return
        }
        if let armedDeadline, armedDeadline <= target { return }
        handles.arm(in: target - monotonicNow)
        armedDeadline = target
    }

    /// Shrinks sparse heaps when no timer is due within 50 ms: freeing a big array can stall the
    /// allocator for milliseconds after a burst, which must not land in front of a due timer. A
    /// heap emptied by cancelling (the common case) shrinks in the very next iteration.
    func giveBackMemory() {
        let quiet: Int64 = 50_000_000
        let now = monotonicNow()
        var soonest = timers.firstKey?.deadline ?? .max
        if let wall = wallTimers.firstKey {
            soonest = min(soonest, Nanoseconds.adding(now, Nanoseconds.subtracting(wall.deadline, wallNow())))
        }
        guard Nanoseconds.subtracting(soonest, now) >= quiet else { return }
        timers.shrinkIfSparse()
        wallTimers.shrinkIfSparse()
    }
}
