#if canImport(Glibc)
import Glibc
#endif

/// A step of a LoopScheduler's set-up, in order. Tests make any one of them fail
/// (``LoopSetUpFaults``) and check that exactly what was acquired before it is released.
package enum LoopSetUpStep: String, CaseIterable, Sendable {
    case loopInit = "uv_loop_init"
    case asyncInit = "uv_async_init"
    case prepareInit = "uv_prepare_init"
    case prepareStart = "uv_prepare_start"
    case idleInit = "uv_idle_init"
    case timerInit = "uv_timer_init"
    case timerFD = "timerfd_create(CLOCK_MONOTONIC)"
    case clockFD = "timerfd_create(CLOCK_REALTIME)"
    case pollInit = "uv_poll_init"
    case pollStart = "uv_poll_start"
    case clockPollInit = "uv_poll_init(clock)"
    case clockPollStart = "uv_poll_start(clock)"
    case clockWatch = "timerfd_settime(clock)"
    case thread = "pthread_create"
}

/// Which set-up step to fail, for tests; `none` in production.
package struct LoopSetUpFaults: Sendable {
    package var failing: LoopSetUpStep?
    package init(failing: LoopSetUpStep? = nil) { self.failing = failing }
    package static let none = LoopSetUpFaults()

    /// Throws the error the real call would, had it failed with `EMFILE`, if `step` is the one to
    /// fail.
    func check(_ step: LoopSetUpStep) throws {
        guard failing == step else { return }
        if step.rawValue.hasPrefix("uv_") {
            throw UVHandles.error(step.rawValue, -EMFILE)
        }
        throw LoopSchedulerError.system(call: step.rawValue, errno: step == .thread ? EAGAIN : EMFILE)
    }
}
