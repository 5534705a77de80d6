import Scheduling

/// A timer handler that counts its fires (a pending timer that must never fire).
final class CountingHandler: SchedulerTimerHandler {
    let tally: Tally

    init(tally: Tally) {
        self.tally = tally
    }

    func timerFired() {
        tally.add()
    }
}
