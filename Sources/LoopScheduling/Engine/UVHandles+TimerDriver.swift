import CLibUV
@_spi(SchedulerEngine) import Scheduling

#if canImport(Glibc)
import Glibc
#endif
// The timer driver's libuv calls (UVHandles.swift sets the handles up and closes them): arming it
// before the loop blocks, the timerfds it reads on Linux, and the callbacks that tell the core.
// With UVHandles.swift, the only files of the loop engine with libuv calls and raw pointers.

extension UVHandles {
    /// Arms the driver to fire `nanoseconds` from now (at least 1 ns; the store re-checks the clock).
    func arm(in nanoseconds: Int64) {
        assertConfined()
        #if os(Linux)
        if timerFD >= 0 {
            let delay = max(1, nanoseconds)
            var spec = itimerspec()
            spec.it_value.tv_sec = Int(delay / 1_000_000_000)
            spec.it_value.tv_nsec = Int(delay % 1_000_000_000)
            let rc = timerfd_settime(timerFD, 0, &spec, nil)
            precondition(rc == 0, "timerfd_settime failed: errno \(errno)")
            return
        }
        #endif
        // Rounded up to whole milliseconds, at least 1: a 0 timeout re-armed from a callback runs
        // again in the same pass on libuv < 1.48 and starves the loop (libuv#4245).
        let milliseconds = UInt64(max(1, nanoseconds / 1_000_000 + (nanoseconds % 1_000_000 > 0 ? 1 : 0)))
        let rc = uv_timer_start(timer, Self.onUVTimer, milliseconds, 0)
        precondition(rc == 0, "uv_timer_start failed: \(Self.message(rc))")
    }

    #if os(Linux)
    /// Arms the realtime timerfd a year out with `TFD_TIMER_CANCEL_ON_SET`, so any step of the
    /// wall clock makes it readable with `ECANCELED`.
    func armClockWatch() throws {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        var spec = itimerspec()
        spec.it_value.tv_sec = now.tv_sec + 365 * 24 * 3600
        let flags = Int32(TFD_TIMER_ABSTIME) | Int32(TFD_TIMER_CANCEL_ON_SET)
        if timerfd_settime(clockFD, flags, &spec, nil) != 0 {
            throw LoopSchedulerError.system(call: "timerfd_settime(clock)", errno: errno)
        }
    }

    static func makeTimerFD(_ clock: Int32, _ call: String) throws -> Int32 {
        let fd = timerfd_create(clock, Int32(TFD_NONBLOCK) | Int32(TFD_CLOEXEC))
        if fd < 0 { throw LoopSchedulerError.system(call: call, errno: errno) }
        return fd
    }

    /// Consumes the monotonic timerfd's expiration count. `EAGAIN` is a spurious wake-up (the fd
    /// was re-armed after it became readable); anything else is a bug.
    private func drainTimerFD() {
        var expirations: UInt64 = 0
        let count = read(timerFD, &expirations, 8)
        precondition(count == 8 || errno == EAGAIN, "read(timerfd) failed: errno \(errno)")
    }

    /// Consumes the realtime timerfd; re-arms it and reports whether the wall clock was set.
    private func drainClockFD() -> Bool {
        var expirations: UInt64 = 0
        let count = read(clockFD, &expirations, 8)
        let clockWasSet = count < 0 && errno == ECANCELED
        precondition(count == 8 || errno == EAGAIN || errno == ECANCELED, "read(clock timerfd) failed: errno \(errno)")
        do { try armClockWatch() } catch { preconditionFailure("re-arming the clock timerfd: \(error)") }
        return clockWasSet
    }
    #endif

    private static let onUVTimer: uv_timer_cb = { handle in UVHandles.owner(of: handle).core!.timerFired() }

    #if os(Linux)
    static let onTimerFD: uv_poll_cb = { handle, status, _ in
        precondition(status == 0, "uv_poll on the timerfd reported \(UVHandles.message(status))")
        let handles = UVHandles.owner(of: handle)
        handles.drainTimerFD()
        handles.core!.timerFired()
    }

    static let onClockFD: uv_poll_cb = { handle, status, _ in
        precondition(status == 0, "uv_poll on the clock timerfd reported \(UVHandles.message(status))")
        let handles = UVHandles.owner(of: handle)
        if handles.drainClockFD() { handles.core!.wallClockChanged() }
    }
    #endif
}
