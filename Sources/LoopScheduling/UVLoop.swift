import CLibUV
import Dispatch
import Scheduling
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

// Every libuv call and every raw pointer of the loop engine lives in this file. The handles'
// `data` field points at the LoopCore, which the handles keep retained from `init` until the
// last close callback, so a callback can never see a freed core.

/// How the timer heap is woken.
package enum TimerDriverKind: Sendable {
    /// A `timerfd` on `CLOCK_MONOTONIC`, nanosecond resolution, watched by a `uv_poll_t` (Linux).
    case timerfd
    /// One `uv_timer_t`, millisecond resolution on libuv's cached loop clock: rounded up, and the
    /// heap re-checks the monotonic clock before running anything.
    case uvTimer

    /// The best driver for this platform.
    package static var preferred: TimerDriverKind {
        #if os(Linux)
        .timerfd
        #else
        .uvTimer
        #endif
    }
}

/// The libuv handles of one LoopScheduler, and the loop itself when the scheduler owns it.
///
/// Loop-confined, except `wake()`, which is `uv_async_send` and safe from any thread until the
/// async handle is closed (the core makes sure no sender is in flight by then).
final class UVHandles {
    let loop: UnsafeMutablePointer<uv_loop_t>
    let ownsLoop: Bool
    private let async: UnsafeMutablePointer<uv_async_t>
    private let prepare: UnsafeMutablePointer<uv_prepare_t>
    private let idle: UnsafeMutablePointer<uv_idle_t>
    private var driver: Driver
    private var openHandles = 0
    private var idleActive = false
    private let corePointer: UnsafeMutableRawPointer

    private enum Driver {
        #if os(Linux)
        /// The monotonic timerfd and its poll; the realtime cancel-on-set timerfd and its poll.
        case timerfd(
            fd: Int32,
            poll: UnsafeMutablePointer<uv_poll_t>,
            clockFD: Int32,
            clockPoll: UnsafeMutablePointer<uv_poll_t>
        )
        #endif
        case uvTimer(UnsafeMutablePointer<uv_timer_t>)
    }

    /// Sets up the handles on `loop` (a new one when `adopting` is nil).
    init(adopting adopted: UnsafeMutableRawPointer?, core: LoopCore, driver kind: TimerDriverKind) throws {
        if let adopted {
            loop = adopted.assumingMemoryBound(to: uv_loop_t.self)
            ownsLoop = false
        } else {
            let raw = UnsafeMutableRawPointer.allocate(byteCount: uv_loop_size(), alignment: 16)
            loop = raw.bindMemory(to: uv_loop_t.self, capacity: 1)
            ownsLoop = true
            let rc = uv_loop_init(loop)
            if rc != 0 {
                raw.deallocate()
                throw Self.error("uv_loop_init", rc)
            }
        }
        corePointer = Unmanaged.passRetained(core).toOpaque()
        async = Self.allocate(UV_ASYNC)
        prepare = Self.allocate(UV_PREPARE)
        idle = Self.allocate(UV_IDLE)
        driver = .uvTimer(Self.allocate(UV_TIMER))  // replaced below when the timerfd works
        do {
            try setUp(kind)
        } catch {
            tearDownAfterFailedSetUp()
            throw error
        }
    }

    private func setUp(_ kind: TimerDriverKind) throws {
        try Self.check("uv_async_init", uv_async_init(loop, async, onAsync))
        register(async)
        try Self.check("uv_prepare_init", uv_prepare_init(loop, prepare))
        register(prepare)
        try Self.check("uv_prepare_start", uv_prepare_start(prepare, onPrepare))
        try Self.check("uv_idle_init", uv_idle_init(loop, idle))
        register(idle)
        guard case .uvTimer(let timer) = driver else { return }
        #if os(Linux)
        if kind == .timerfd {
            timer.deinitialize(count: 1)
            UnsafeMutableRawPointer(timer).deallocate()
            let fd = try Self.makeTimerFD(CLOCK_MONOTONIC)
            let clockFD: Int32
            do { clockFD = try Self.makeTimerFD(CLOCK_REALTIME) } catch {
                close(fd)
                throw error
            }
            let poll: UnsafeMutablePointer<uv_poll_t> = Self.allocate(UV_POLL)
            let clockPoll: UnsafeMutablePointer<uv_poll_t> = Self.allocate(UV_POLL)
            driver = .timerfd(fd: fd, poll: poll, clockFD: clockFD, clockPoll: clockPoll)
            try Self.check("uv_poll_init", uv_poll_init(loop, poll, fd))
            register(poll)
            try Self.check("uv_poll_start", uv_poll_start(poll, Int32(UV_READABLE.rawValue), onTimerFD))
            try Self.check("uv_poll_init", uv_poll_init(loop, clockPoll, clockFD))
            register(clockPoll)
            try Self.check("uv_poll_start", uv_poll_start(clockPoll, Int32(UV_READABLE.rawValue), onClockFD))
            try armClockWatch()
            return
        }
        #endif
        try Self.check("uv_timer_init", uv_timer_init(loop, timer))
        register(timer)
    }

    /// Points the handle's `data` at the core and counts it as open.
    private func register<Handle>(_ handle: UnsafeMutablePointer<Handle>) {
        Self.asHandle(handle).pointee.data = corePointer
        openHandles += 1
    }

    /// After a failed set-up, nothing ran yet: close what was initialized and spin the loop until
    /// the close callbacks ran, so no memory or fd is left behind.
    private func tearDownAfterFailedSetUp() {
        closeAll()
        if ownsLoop {
            while openHandles > 0 { uv_run(loop, UV_RUN_NOWAIT) }
            _ = uv_loop_close(loop)
            UnsafeMutableRawPointer(loop).deallocate()
        }
    }

    // MARK: Cross-thread wake-up

    /// `uv_async_send`: thread-safe, coalescing. Its only failure mode is a closed handle, which the
    /// core rules out.
    func wake() {
        let rc = uv_async_send(async)
        precondition(rc == 0, "uv_async_send failed: \(Self.message(rc))")
    }

    // MARK: Idle (keeps the loop from blocking while local work is pending)

    func startIdle() {
        guard !idleActive else { return }
        idleActive = true
        let rc = uv_idle_start(idle, onIdle)
        precondition(rc == 0, "uv_idle_start failed: \(Self.message(rc))")
    }

    func stopIdle() {
        guard idleActive else { return }
        idleActive = false
        let rc = uv_idle_stop(idle)
        precondition(rc == 0, "uv_idle_stop failed: \(Self.message(rc))")
    }

    // MARK: The timer driver

    /// Arms the driver to fire `nanoseconds` from now (at least 1 ns; the core re-checks its clock).
    func arm(in nanoseconds: Int64) {
        switch driver {
        #if os(Linux)
        case .timerfd(let fd, _, _, _):
            let delay = max(1, nanoseconds)
            var spec = itimerspec()
            spec.it_value.tv_sec = Int(delay / 1_000_000_000)
            spec.it_value.tv_nsec = Int(delay % 1_000_000_000)
            let rc = timerfd_settime(fd, 0, &spec, nil)
            precondition(rc == 0, "timerfd_settime failed: errno \(errno)")
        #endif
        case .uvTimer(let timer):
            // Rounded up to whole milliseconds, at least 1: a 0 timeout re-armed from a callback
            // runs again in the same pass on libuv < 1.48 and starves the loop (libuv#4245).
            let milliseconds = UInt64(max(1, nanoseconds / 1_000_000 + (nanoseconds % 1_000_000 > 0 ? 1 : 0)))
            let rc = uv_timer_start(timer, onUVTimer, milliseconds, 0)
            precondition(rc == 0, "uv_timer_start failed: \(Self.message(rc))")
        }
    }

    #if os(Linux)
    /// Arms the realtime timerfd a year out with `TFD_TIMER_CANCEL_ON_SET`, so any step of the
    /// wall clock makes it readable with `ECANCELED`.
    private func armClockWatch() throws {
        guard case .timerfd(_, _, let clockFD, _) = driver else { return }
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        var spec = itimerspec()
        spec.it_value.tv_sec = now.tv_sec + 365 * 24 * 3600
        let flags = Int32(TFD_TIMER_ABSTIME) | Int32(TFD_TIMER_CANCEL_ON_SET)
        if timerfd_settime(clockFD, flags, &spec, nil) != 0 {
            throw LoopSchedulerError.system(call: "timerfd_settime", errno: errno)
        }
    }

    private static func makeTimerFD(_ clock: Int32) throws -> Int32 {
        let fd = timerfd_create(clock, Int32(TFD_NONBLOCK) | Int32(TFD_CLOEXEC))
        if fd < 0 { throw LoopSchedulerError.system(call: "timerfd_create", errno: errno) }
        return fd
    }

    /// Consumes the monotonic timerfd's expiration count. `EAGAIN` is a spurious wake-up (the fd
    /// was re-armed after it became readable); anything else is a bug.
    fileprivate func drainTimerFD() {
        guard case .timerfd(let fd, _, _, _) = driver else { return }
        var expirations: UInt64 = 0
        let count = read(fd, &expirations, 8)
        precondition(count == 8 || errno == EAGAIN, "read(timerfd) failed: errno \(errno)")
    }

    /// Consumes the realtime timerfd; re-arms it and reports whether the wall clock was set.
    fileprivate func drainClockFD() -> Bool {
        guard case .timerfd(_, _, let clockFD, _) = driver else { return false }
        var expirations: UInt64 = 0
        let count = read(clockFD, &expirations, 8)
        let clockWasSet = count < 0 && errno == ECANCELED
        precondition(count == 8 || errno == EAGAIN || errno == ECANCELED, "read(clock timerfd) failed: errno \(errno)")
        do { try armClockWatch() } catch { preconditionFailure("re-arming the clock timerfd: \(error)") }
        return clockWasSet
    }
    #endif

    // MARK: Closing

    /// Closes every handle; the core hears `handlesDidClose()` from the last close callback, after
    /// which the handles' memory and the retained core are released.
    func closeAll() {
        func close<Handle>(_ handle: UnsafeMutablePointer<Handle>) {
            let raw = Self.asHandle(handle)
            if uv_is_closing(raw) == 0 { uv_close(raw, onClose) }
        }
        close(async)
        close(prepare)
        close(idle)
        switch driver {
        #if os(Linux)
        case .timerfd(_, let poll, _, let clockPoll):
            close(poll)
            close(clockPoll)
        #endif
        case .uvTimer(let timer):
            close(timer)
        }
    }

    fileprivate func handleDidClose(_ handle: UnsafeMutablePointer<uv_handle_t>) {
        // The fds are closed after their polls: closing an fd libuv still watches is undefined.
        #if os(Linux)
        if case .timerfd(let fd, let poll, let clockFD, let clockPoll) = driver {
            if handle == Self.asHandle(poll) { Glibc.close(fd) }
            if handle == Self.asHandle(clockPoll) { Glibc.close(clockFD) }
        }
        #endif
        UnsafeMutableRawPointer(handle).deallocate()
        openHandles -= 1
        if openHandles == 0 {
            let core = Unmanaged<LoopCore>.fromOpaque(corePointer)
            core.takeUnretainedValue().handlesDidClose()
            core.release()
        }
    }

    // MARK: Running an owned loop

    /// Runs the loop until every handle is closed.
    func run() {
        uv_run(loop, UV_RUN_DEFAULT)
    }

    /// Closes and frees an owned loop. `uv_loop_close` must return 0: every handle is closed.
    func closeLoop() {
        guard ownsLoop else { return }
        let rc = uv_loop_close(loop)
        precondition(rc == 0, "uv_loop_close failed: \(Self.message(rc)); a handle is still open")
        UnsafeMutableRawPointer(loop).deallocate()
    }

    // MARK: Helpers

    private static func allocate<Handle>(_ type: uv_handle_type) -> UnsafeMutablePointer<Handle> {
        let raw = UnsafeMutableRawPointer.allocate(byteCount: uv_handle_size(type), alignment: 16)
        raw.initializeMemory(as: UInt8.self, repeating: 0, count: uv_handle_size(type))
        return raw.bindMemory(to: Handle.self, capacity: 1)
    }

    fileprivate static func asHandle<Handle>(
        _ handle: UnsafeMutablePointer<Handle>
    ) -> UnsafeMutablePointer<uv_handle_t> {
        UnsafeMutableRawPointer(handle).assumingMemoryBound(to: uv_handle_t.self)
    }

    private static func check(_ call: String, _ rc: Int32) throws {
        if rc != 0 { throw error(call, rc) }
    }

    private static func error(_ call: String, _ rc: Int32) -> LoopSchedulerError {
        .libuv(call: call, code: rc, message: message(rc))
    }

    fileprivate static func message(_ rc: Int32) -> String {
        String(cString: uv_strerror(rc))
    }
}

/// The core behind any of our handles.
private func core<Handle>(_ handle: UnsafeMutablePointer<Handle>?) -> LoopCore {
    Unmanaged<LoopCore>.fromOpaque(UVHandles.asHandle(handle!).pointee.data!).takeUnretainedValue()
}

private let onAsync: uv_async_cb = { handle in core(handle).asyncFired() }
private let onPrepare: uv_prepare_cb = { handle in core(handle).prepareFired() }
private let onIdle: uv_idle_cb = { handle in core(handle).idleFired() }
private let onUVTimer: uv_timer_cb = { handle in core(handle).timerFired() }
private let onClose: uv_close_cb = { handle in core(handle).handles.handleDidClose(handle!) }

#if os(Linux)
private let onTimerFD: uv_poll_cb = { handle, status, _ in
    precondition(status == 0, "uv_poll on the timerfd reported \(UVHandles.message(status))")
    let core = core(handle)
    core.handles.drainTimerFD()
    core.timerFired()
}

private let onClockFD: uv_poll_cb = { handle, status, _ in
    precondition(status == 0, "uv_poll on the clock timerfd reported \(UVHandles.message(status))")
    let core = core(handle)
    if core.handles.drainClockFD() { core.wallClockChanged() }
}
#endif

/// A stand-in for a host program that owns a `uv_loop_t` and runs it on its own thread: how the
/// tests and the benchmarks exercise ``LoopScheduler/init(adopting:)``.
package final class HostLoop: Sendable {
    private let thread = LoopThread()
    private let finished = DispatchSemaphore(value: 0)
    private let closeResult = LockedValue<Int32?>(nil)

    private init() {}

    /// Starts a host thread with a fresh loop, calls `setUp` on it with the loop (before `uv_run`,
    /// as a host would create an adopting scheduler), then runs the loop until no handle is left.
    package static func start<Result: Sendable>(
        name: String,
        _ setUp: @escaping @Sendable (UnsafeMutableRawPointer) throws -> Result
    ) throws -> (HostLoop, Result) {
        let host = HostLoop()
        let ready = DispatchSemaphore(value: 0)
        let outcome = LockedValue<Swift.Result<Result, any Error>?>(nil)
        try host.thread.start(name: name) {
            let raw = UnsafeMutableRawPointer.allocate(byteCount: uv_loop_size(), alignment: 16)
            let loop = raw.bindMemory(to: uv_loop_t.self, capacity: 1)
            let rc = uv_loop_init(loop)
            precondition(rc == 0, "uv_loop_init failed: \(UVHandles.message(rc))")
            let result = Swift.Result { try setUp(raw) }
            outcome.withLock { $0 = result }
            ready.signal()
            uv_run(loop, UV_RUN_DEFAULT)
            let closed = uv_loop_close(loop)
            raw.deallocate()
            host.closeResult.withLock { $0 = closed }
            host.finished.signal()
        }
        ready.wait()
        let result = try outcome.withLock { $0! }.get()
        return (host, result)
    }

    /// Waits for `uv_run` to return and the loop to be closed; returns `uv_loop_close`'s result.
    package func waitUntilFinished() -> Int32 {
        finished.wait()
        finished.signal()
        thread.join()
        return closeResult.withLock { $0! }
    }
}
