import CLibUV
import LoopEngine
@_spi(SchedulerEngine) import Scheduling
import Synchronization

#if canImport(Glibc)
import Glibc
#endif
// Every libuv call and every raw pointer of the loop engine lives in this file and in
// UVHandles+TimerDriver.swift, the timer driver's handles (pthread calls live in LoopThread.swift,
// a host program's few libuv calls in HostUVLoop.swift). The handles' `data` field points at their
// UVHandles, which keeps itself retained from set-up until the last close callback, so a callback
// never sees freed memory, also when the close callbacks of a failed set-up run later on a host's
// loop.

/// The libuv handles of one LoopScheduler, and the loop itself when the scheduler owns it.
///
/// Set-up acquires resources one at a time and records each; if a step fails, ``init`` releases
/// in reverse exactly what it had acquired — a handle that was never initialised is freed, not
/// closed — and throws ``LoopSchedulerError`` naming the call (libuv's `uv_loop_init` does the
/// same with its `fail_…` labels).
///
/// Loop-confined, except `wake()`, which is `uv_async_send`: safe from any thread until the async
/// handle closes (the core sends and closes under one lock). Every other method that touches the
/// handles' state asserts the loop thread in debug builds, as the engine's parts do; set-up and a
/// failed set-up's release run before any loop thread exists, with no core to ask.
final class UVHandles: LoopDriver {
    let loop: UnsafeMutablePointer<uv_loop_t>
    let ownsLoop: Bool
    /// The engine the callbacks drive. Strong until the last close callback (the cycle with the
    /// core's own reference is broken there); nil after a failed set-up, so late close callbacks
    /// on a host's loop touch nothing but their own memory.
    private(set) var core: LoopCore?
    private var async: UnsafeMutablePointer<uv_async_t>?
    private var prepare: UnsafeMutablePointer<uv_prepare_t>?
    private var idle: UnsafeMutablePointer<uv_idle_t>?
    /// The `uv_timer_t` driver's handle (UVHandles+TimerDriver.swift arms it).
    private(set) var timer: UnsafeMutablePointer<uv_timer_t>?
    /// The monotonic timerfd and the realtime cancel-on-set one, and the polls watching them: each
    /// fd is closed after its poll's close callback (closing an fd libuv watches is undefined), or
    /// directly if its poll was never initialised.
    private(set) var timerFD: Int32 = -1
    private(set) var clockFD: Int32 = -1
    private var poll: UnsafeMutablePointer<uv_poll_t>?
    private var clockPoll: UnsafeMutablePointer<uv_poll_t>?
    /// Initialised handles not yet closed.
    private var openHandles = 0
    private var idleActive = false

    /// Sets up the handles on `adopted`, or on a new loop when it is nil.
    init(
        adopting adopted: UnsafeMutableRawPointer?,
        core: LoopCore,
        driver kind: TimerDriverKind,
        faults: LoopSetUpFaults
    ) throws {
        if let adopted {
            loop = adopted.assumingMemoryBound(to: uv_loop_t.self)
            ownsLoop = false
        } else {
            let raw = UnsafeMutableRawPointer.allocate(byteCount: uv_loop_size(), alignment: 16)
            loop = raw.bindMemory(to: uv_loop_t.self, capacity: 1)
            ownsLoop = true
            do {
                try faults.check(.loopInit)
                try Self.initLoop(loop)
            } catch {
                raw.deallocate()
                throw error
            }
        }
        self.core = core
        // Released by the last close callback (or below, if no handle was ever initialised).
        _ = Unmanaged.passRetained(self)
        do {
            try setUp(kind, faults: faults)
        } catch {
            releaseAfterFailedSetUp()
            throw error
        }
    }

    private func setUp(_ kind: TimerDriverKind, faults: LoopSetUpFaults) throws {
        async = try initHandle(UV_ASYNC, .asyncInit, faults) { uv_async_init(loop, $0, Self.onAsync) }
        prepare = try initHandle(UV_PREPARE, .prepareInit, faults) { uv_prepare_init(loop, $0) }
        try faults.check(.prepareStart)
        try Self.check("uv_prepare_start", uv_prepare_start(prepare, Self.onPrepare))
        idle = try initHandle(UV_IDLE, .idleInit, faults) { uv_idle_init(loop, $0) }
        #if os(Linux)
        if kind == .timerfd {
            try faults.check(.timerFD)
            timerFD = try Self.makeTimerFD(CLOCK_MONOTONIC, "timerfd_create(CLOCK_MONOTONIC)")
            try faults.check(.clockFD)
            clockFD = try Self.makeTimerFD(CLOCK_REALTIME, "timerfd_create(CLOCK_REALTIME)")
            poll = try initHandle(UV_POLL, .pollInit, faults) { uv_poll_init(loop, $0, timerFD) }
            try faults.check(.pollStart)
            try Self.check("uv_poll_start", uv_poll_start(poll, Int32(UV_READABLE.rawValue), Self.onTimerFD))
            clockPoll = try initHandle(UV_POLL, .clockPollInit, faults) { uv_poll_init(loop, $0, clockFD) }
            try faults.check(.clockPollStart)
            try Self.check("uv_poll_start", uv_poll_start(clockPoll, Int32(UV_READABLE.rawValue), Self.onClockFD))
            try faults.check(.clockWatch)
            try armClockWatch()
            return
        }
        #endif
        timer = try initHandle(UV_TIMER, .timerInit, faults) { uv_timer_init(loop, $0) }
    }

    /// Allocates a handle and initialises it; on failure frees it (it was never initialised, so it
    /// must not be closed) and throws. On success its `data` points at the core and it counts as
    /// open.
    private func initHandle<Handle>(
        _ type: uv_handle_type,
        _ step: LoopSetUpStep,
        _ faults: LoopSetUpFaults,
        _ initialise: (UnsafeMutablePointer<Handle>) -> Int32
    ) throws -> UnsafeMutablePointer<Handle> {
        let size = uv_handle_size(type)
        let raw = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: 16)
        raw.initializeMemory(as: UInt8.self, repeating: 0, count: size)
        let handle = raw.bindMemory(to: Handle.self, capacity: 1)
        do {
            try faults.check(step)
            try Self.check(step.rawValue, initialise(handle))
        } catch {
            raw.deallocate()
            throw error
        }
        Self.asHandle(handle).pointee.data = Unmanaged.passUnretained(self).toOpaque()
        openHandles += 1
        return handle
    }

    /// Releases, in reverse, what a failed set-up acquired: closes the initialised handles, closes
    /// the fds no poll owns, and for an owned loop runs it until the close callbacks ran and closes
    /// it. On an adopted loop the close callbacks run when the host next runs its loop; they free
    /// the handles' memory and the fds then.
    func releaseAfterFailedSetUp() {
        // Close callbacks only free memory from now on: the core's lifecycle is closed already.
        core = nil
        if poll == nil, timerFD >= 0 { Glibc.close(timerFD) }
        if clockPoll == nil, clockFD >= 0 { Glibc.close(clockFD) }
        let hadHandles = openHandles > 0
        closeAll()
        if !hadHandles { Unmanaged.passUnretained(self).release() }
        guard ownsLoop else { return }
        while openHandles > 0 { uv_run(loop, UV_RUN_NOWAIT) }
        let rc = uv_loop_close(loop)
        precondition(rc == 0, "uv_loop_close after a failed set-up failed: \(Self.message(rc))")
        UnsafeMutableRawPointer(loop).deallocate()
    }

    /// `uv_loop_init`, made safe at the descriptor limit. On failure the loop holds nothing.
    ///
    /// The first `uv_loop_init` of a process also makes libuv's process-wide signal lock, a pipe
    /// (`uv__signal_global_once_init`), and libuv calls `abort()` if it cannot: a process at its
    /// descriptor limit would die in its first scheduler instead of getting an error. Until one
    /// init succeeded, three descriptors are taken and given back first (libuv 1.44 holds the
    /// loop's epoll descriptor when it makes the pipe), so that a process without them gets
    /// ``LoopSchedulerError`` naming `uv_loop_init`. (Another thread taking the last descriptors
    /// between that check and libuv's pipe can still reach the abort: the window is the first
    /// init's alone, and only at the limit.)
    static func initLoop(_ loop: UnsafeMutablePointer<uv_loop_t>) throws {
        if !libuvGlobalsMade.load(ordering: .acquiring) {
            // The loop's epoll descriptor comes first, then the pipe: three descriptors at once.
            var ends: [Int32] = [-1, -1]
            guard pipe(&ends) == 0 else { throw LoopSchedulerError.system(call: "uv_loop_init", errno: errno) }
            let third = dup(ends[0])
            let failure = errno
            Glibc.close(ends[0])
            Glibc.close(ends[1])
            guard third >= 0 else { throw LoopSchedulerError.system(call: "uv_loop_init", errno: failure) }
            Glibc.close(third)
        }
        let rc = uv_loop_init(loop)
        if rc != 0 {
            closeLeakedBackend(of: loop)
            throw error("uv_loop_init", rc)
        }
        libuvGlobalsMade.store(true, ordering: .releasing)
    }

    /// Whether a `uv_loop_init` succeeded in this process, so libuv's signal lock exists.
    private static let libuvGlobalsMade = Atomic<Bool>(false)

    /// libuv 1.44 (Debian 12) leaves the epoll fd open when `uv_loop_init` fails after creating it
    /// (its failure path calls `uv__platform_loop_delete`, which does not close `backend_fd`):
    /// measured, one fd lost per failed init under `RLIMIT_NOFILE`. Close it if it is still an
    /// epoll instance — the check keeps a fixed libuv, or a field never set, from closing
    /// somebody else's fd.
    private static func closeLeakedBackend(of loop: UnsafeMutablePointer<uv_loop_t>) {
        #if os(Linux)
        let fd = uv_backend_fd(loop)
        guard fd > 2 else { return }
        var target = [CChar](repeating: 0, count: 64)
        let length = readlink("/proc/self/fd/\(fd)", &target, target.count - 1)
        guard length > 0 else { return }
        let link = String(decoding: target[0..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        if link == "anon_inode:[eventpoll]" { Glibc.close(fd) }
        #endif
    }

    /// Debug builds: stop unless on the loop thread (while a core is attached).
    @inline(__always)
    func assertConfined(_ function: StaticString = #function) {
        core?.assertOnLoopThread(function)
    }

    // MARK: Cross-thread wake-up

    /// `uv_async_send`: thread-safe, coalescing. Its only failure mode is a closed handle, which the
    /// core rules out by sending and closing under one lock.
    func wake() {
        let rc = uv_async_send(async)
        precondition(rc == 0, "uv_async_send failed: \(Self.message(rc))")
    }

    /// libuv's cached loop time in milliseconds, refreshed when the poll returns: free to read.
    var loopTimeMillis: UInt64? { uv_now(loop) }

    /// libuv's prepare handle calls ``LoopCore/prepareFired()`` before every poll.
    var preparesBeforeEveryBlock: Bool { true }

    /// Never called: the prepare callback re-arms before the loop blocks.
    func timersEmptied() {}

    // MARK: Idle (keeps the loop from blocking while local work is pending)

    func startIdle() {
        assertConfined()
        guard !idleActive else { return }
        idleActive = true
        let rc = uv_idle_start(idle, Self.onIdle)
        precondition(rc == 0, "uv_idle_start failed: \(Self.message(rc))")
    }

    func stopIdle() {
        assertConfined()
        guard idleActive else { return }
        idleActive = false
        let rc = uv_idle_stop(idle)
        precondition(rc == 0, "uv_idle_stop failed: \(Self.message(rc))")
    }

    // MARK: Closing

    /// Closes every initialised handle; ``LoopShutdown/handlesClosed(_:)`` hears from the last close
    /// callback, after which the retained core is released.
    func closeAll() {
        assertConfined()
        func close<Handle>(_ handle: UnsafeMutablePointer<Handle>?) {
            guard let handle else { return }
            let raw = Self.asHandle(handle)
            if uv_is_closing(raw) == 0 { uv_close(raw, Self.onClose) }
        }
        close(async)
        close(prepare)
        close(idle)
        close(poll)
        close(clockPoll)
        close(timer)
    }

    private func handleDidClose(_ handle: UnsafeMutablePointer<uv_handle_t>) {
        assertConfined()
        #if os(Linux)
        if let poll, handle == Self.asHandle(poll) {
            Glibc.close(timerFD)
            timerFD = -1
        }
        if let clockPoll, handle == Self.asHandle(clockPoll) {
            Glibc.close(clockFD)
            clockFD = -1
        }
        #endif
        UnsafeMutableRawPointer(handle).deallocate()
        openHandles -= 1
        guard openHandles == 0 else { return }
        let core = self.core
        self.core = nil
        if let core { LoopShutdown.handlesClosed(core) }
        Unmanaged.passUnretained(self).release()
    }

    // MARK: Running an owned loop

    /// Runs the loop until every handle is closed.
    func run() {
        let rc = uv_run(loop, UV_RUN_DEFAULT)
        precondition(rc == 0, "uv_run returned \(rc) with handles still active after shutdown")
    }

    /// Closes and frees an owned loop. `uv_loop_close` must return 0: every handle is closed.
    func closeLoop() {
        guard ownsLoop else { return }
        let rc = uv_loop_close(loop)
        precondition(rc == 0, "uv_loop_close failed: \(Self.message(rc)); a handle is still open")
        UnsafeMutableRawPointer(loop).deallocate()
    }

    // MARK: Helpers

    static func asHandle<Handle>(
        _ handle: UnsafeMutablePointer<Handle>
    ) -> UnsafeMutablePointer<uv_handle_t> {
        UnsafeMutableRawPointer(handle).assumingMemoryBound(to: uv_handle_t.self)
    }

    private static func check(_ call: String, _ rc: Int32) throws {
        if rc != 0 { throw error(call, rc) }
    }

    static func error(_ call: String, _ rc: Int32) -> LoopSchedulerError {
        .libuv(call: call, code: rc, message: message(rc))
    }

    static func message(_ rc: Int32) -> String {
        String(cString: uv_strerror(rc))
    }

    /// The UVHandles behind any of its handles.
    static func owner<Handle>(of handle: UnsafeMutablePointer<Handle>?) -> UVHandles {
        Unmanaged<UVHandles>.fromOpaque(asHandle(handle!).pointee.data!).takeUnretainedValue()
    }

    // Only close callbacks can come after a failed set-up (the others were never started), so the
    // others can rely on the core. The timer driver's are in UVHandles+TimerDriver.swift.
    private static let onAsync: uv_async_cb = { handle in UVHandles.owner(of: handle).core!.asyncFired() }
    private static let onPrepare: uv_prepare_cb = { handle in UVHandles.owner(of: handle).core!.prepareFired() }
    private static let onIdle: uv_idle_cb = { handle in UVHandles.owner(of: handle).core!.idleFired() }
    private static let onClose: uv_close_cb = { handle in UVHandles.owner(of: handle).handleDidClose(handle!) }
}
