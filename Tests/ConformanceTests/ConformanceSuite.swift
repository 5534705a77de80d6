import Testing

/// The behaviour contract of `Docs/Design.md` §4, checked against every scheduler.
///
/// | rule | Immediate | Queue | Concurrent | Subscription | Test | Loop (4 kinds) |
/// |---|---|---|---|---|---|---|
/// | 1 cancellation | runs inline: nothing to cancel; dispose is idempotent | yes | yes | yes | yes | yes |
/// | 2 current scheduler | unchanged, by definition | yes | yes | its background | yes | yes |
/// | 3 order | inline, so trivially in order | yes | timers only (parallel queue) | yes, but nested work runs inline (rule 7) | yes | yes |
/// | 4 never early | blocking timers: yes | yes | yes | yes | virtual | yes |
/// | 5 periodic | none (not a DateScheduler) | yes | yes | yes | yes | yes |
/// | 6 recursion | trampolines | yes | yes | yes | yes | yes |
/// | 7 immediate/subscription | `SchedulingTests` | – | – | `SchedulingTests` | – | – |
/// | 8 test scheduler | – | – | – | – | `SchedulingTests` | – |
/// | 9 bad input | date checks | yes | yes | yes | yes | yes, plus after shutdown |
///
/// Where a cell says why a rule does not apply, the test's arguments leave that scheduler out.
///
/// The loop kinds: on its own thread, on the caller's thread (`run`), adopted by a host loop, and
/// on its own thread with the `uv_timer_t` driver (the default where there is no `timerfd`).
@Suite("Conformance")
struct Conformance {
    @Test(
        "Every scheduler under test can be made, runs work, and is torn down cleanly",
        arguments: SchedulerKind.allCases
    )
    func harnessWorks(kind: SchedulerKind) async throws {
        try await Harness.with(kind) { harness in
            let log = Recorder<Int>(harness)
            harness.scheduler.schedule { log.append(1) }
            #expect(await log.wait(for: 1))
        }
    }
}
