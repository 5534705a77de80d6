// A process of its own for the tests of LoopSchedulers at the process's limits (issue 14): run by
// `LoopProcessLimitTests`, one scenario per process, so that its first act can measure the
// process's descriptors and threads before anything made a scheduler or touched Dispatch. A test
// runner's own process (an exit test's child too) has Dispatch running already: its epoll,
// eventfd and worker threads would hide a scheduler that starts libdispatch.
//
// Plain synchronous code: no Foundation API, no Dispatch, no Swift concurrency. It prints one
// line per result to stdout and exits 0, or prints `FAILED: …` to stderr and exits 1; `alarm`
// turns a hang into SIGALRM.
//
//     LoopLimitsProbe descriptors SPARE   every kind of scheduler with SPARE descriptors free
//     LoopLimitsProbe threads             the same at a thread limit, as an unprivileged user
//     LoopLimitsProbe churn COUNT         COUNT schedulers made and released, counts before/after

import LoopScheduling
import Scheduling
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

// MARK: Reporting

func fail(_ message: String) -> Never {
    emit("FAILED: \(message)\n", to: 2)
    exit(1)
}

func check(_ condition: Bool, _ message: @autoclosure () -> String) {
    if !condition { fail(message()) }
}

func say(_ line: String) {
    emit(line + "\n", to: 1)
}

/// Unbuffered, so nothing is lost when the process exits or is killed.
func emit(_ text: String, to fd: Int32) {
    var text = text
    text.withUTF8 { bytes in _ = write(fd, bytes.baseAddress, bytes.count) }
}

// MARK: The process's resources

/// Open descriptors and threads of this process, read from /proc without opening anything that
/// stays open.
struct Counts: Equatable, CustomStringConvertible {
    var descriptors: Int
    var threads: Int

    static func now() -> Counts {
        Counts(descriptors: openDescriptors(), threads: threadCount())
    }

    var description: String { "\(descriptors) descriptors, \(threads) threads" }

    /// Asks each descriptor number rather than listing /proc/self/fd, which a process that changed
    /// its user can no longer read.
    private static func openDescriptors() -> Int {
        (0..<1_024).reduce(0) { count, fd in fcntl(Int32(fd), F_GETFD) >= 0 ? count + 1 : count }
    }

    /// Lists /proc/self/task through a directory stream opened before any limit was set (its
    /// descriptor is part of the baseline): at the descriptor limit nothing new can be opened.
    private static func threadCount() -> Int {
        rewinddir(taskDirectory)
        var count = 0
        while let entry = readdir(taskDirectory) {
            let isDot = withUnsafeBytes(of: entry.pointee.d_name) { $0[0] == UInt8(ascii: ".") }
            if !isDot { count += 1 }
        }
        return count
    }
}

nonisolated(unsafe) let taskDirectory: OpaquePointer = {
    guard let directory = opendir("/proc/self/task") else { fail("opendir(/proc/self/task): errno \(errno)") }
    return directory
}()

/// What each open descriptor is, by number.
func descriptorLinks() -> [Int32: String] {
    var links: [Int32: String] = [:]
    for fd in Int32(0)..<1_024 where fcntl(fd, F_GETFD) >= 0 {
        var target = [CChar](repeating: 0, count: 128)
        let length = readlink("/proc/self/fd/\(fd)", &target, target.count - 1)
        links[fd] = length > 0 ? String(decoding: target[0..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self) : "?"
    }
    return links
}

func describeDescriptors() -> String {
    descriptorLinks().sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
}

/// The descriptors at the start, before anything made a scheduler, touched libuv or Dispatch.
nonisolated(unsafe) var baselineLinks: [Int32: String] = [:]

/// Descriptors open now that were not at the start, other than libuv's own process-wide signal
/// lock: a pipe its first `uv_loop_init` in a process makes (`uv__signal_global_once_init`) and
/// keeps until the process exits, whoever made the loop. Nil if the only new ones are that pipe.
func unexpectedDescriptors() -> String? {
    var added = descriptorLinks().filter { baselineLinks[$0.key] == nil }
    let pipes = Dictionary(grouping: added.filter { $0.value.hasPrefix("pipe:") }, by: \.value)
    if pipes.count == 1, let pair = pipes.first, pair.value.count == 2 {
        for (fd, _) in pair.value { added[fd] = nil }
    }
    return added.isEmpty ? nil : added.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
}

/// Waits briefly for the process to come back to `baseline` — its thread count exactly, its
/// descriptors but for libuv's signal lock pipe: a joined thread is gone at once, but the kernel
/// may still list a detached one that is exiting.
func expectSettled(at baseline: Counts, _ context: String) {
    let readable = !baselineLinks.isEmpty
    for _ in 0..<2_000 {
        let now = Counts.now()
        let descriptorsBack = readable ? unexpectedDescriptors() == nil : now.descriptors == baseline.descriptors
        if descriptorsBack && now.threads == baseline.threads { return }
        usleep(1_000)
    }
    fail("\(context): \(Counts.now()) afterwards, \(baseline) before; now open: \(describeDescriptors())")
}

/// Checks that `error` is a LoopSchedulerError naming one of the calls set-up makes.
func expectNamedCall(_ error: any Error, _ context: String) {
    guard let error = error as? LoopSchedulerError else { fail("\(context): not a LoopSchedulerError: \(error)") }
    let calls = ["uv_loop_init", "uv_async_init", "uv_prepare_init", "uv_prepare_start", "uv_idle_init",
                 "uv_timer_init", "timerfd_create", "uv_poll_init", "uv_poll_start", "timerfd_settime", "pthread_create"]
    check(calls.contains { error.description.contains($0) }, "\(context): the error names no set-up call: \(error)")
}

// MARK: Scenarios

/// Counts actions that ran (on the loop's thread, read after it closed).
final class Counter: Sendable {
    private let count = Atomic<Int>(0)
    func add() { count.add(1, ordering: .relaxed) }
    var value: Int { count.load(ordering: .relaxed) }
}

/// Own-thread schedulers until one throws (at most `cap`); then two freed and one made again.
func ownThread(cap: Int = 64) -> (made: Int, failed: Bool) {
    var loops: [LoopScheduler] = []
    var failed = false
    while loops.count < cap {
        do {
            loops.append(try LoopScheduler(name: "probe"))
        } catch {
            expectNamedCall(error, "LoopScheduler(name:) with \(loops.count) running")
            failed = true
            break
        }
    }
    let made = loops.count
    if failed && made >= 2 {
        loops.removeLast(2)  // released here, on a thread that runs no loop: joined at once
        do {
            loops.append(try LoopScheduler(name: "again"))
        } catch {
            fail("LoopScheduler(name:) failed again after two were released: \(error)")
        }
    }
    // Half shut down explicitly, half by their last release.
    for (index, loop) in loops.enumerated() where index % 2 == 0 { loop.syncShutdown() }
    loops.removeAll()
    return (made, failed)
}

/// Groups of three until one throws (at most `cap`); then one freed and one made again.
func groups(cap: Int = 16) -> (made: Int, failed: Bool) {
    var groups: [LoopSchedulerGroup] = []
    var failed = false
    while groups.count < cap {
        do {
            groups.append(try LoopSchedulerGroup(count: 3, name: "probe"))
        } catch {
            expectNamedCall(error, "LoopSchedulerGroup(count: 3) with \(groups.count) running")
            failed = true
            break
        }
    }
    let made = groups.count
    if failed && made >= 1 {
        groups.removeLast().syncShutdown()
        do {
            groups.append(try LoopSchedulerGroup(count: 3, name: "again"))
        } catch {
            fail("LoopSchedulerGroup(count: 3) failed again after one was released: \(error)")
        }
    }
    groups.removeAll()
    return (made, failed)
}

/// `LoopScheduler.run(name:_:)` on this thread, its body shutting it down; whether it ran.
func callerThread() -> Bool {
    let ran = Counter()
    do {
        try LoopScheduler.run(name: "probe") { loop in
            loop.schedule { ran.add() }
            loop.syncShutdown()
        }
    } catch {
        expectNamedCall(error, "LoopScheduler.run(name:)")
        return false
    }
    check(ran.value == 1, "run(name:): a task accepted before shutdown did not run")
    return true
}

/// Adopted schedulers on a host loop run by this thread until one throws (at most `cap`), shut
/// down here before the loop ever ran (half by `shutdown()`, half by their last release), then one
/// adopted and run once before its shutdown; the host's loop must close. Nil when the host could
/// not make its own loop at this budget (not the scheduler's failure).
func adopted(cap: Int = 64) -> (made: Int, failed: Bool)? {
    guard let loop = HostUVLoop.make() else { return nil }
    var loops: [LoopScheduler] = []
    var failed = false
    while loops.count < cap {
        do {
            loops.append(try LoopScheduler(adopting: loop))
        } catch {
            expectNamedCall(error, "LoopScheduler(adopting:) with \(loops.count) adopted")
            failed = true
            break
        }
    }
    let made = loops.count
    let ran = Counter()
    for loop in loops { loop.schedule { ran.add() } }
    // Before the host's first uv_run, on the host's thread: each must return, not wait for itself.
    for (index, loop) in loops.enumerated() where index % 2 == 0 { loop.syncShutdown() }
    loops.removeAll()
    check(ran.value == made, "adopted: \(ran.value) of \(made) tasks accepted before shutdown ran")
    HostUVLoop.run(loop)

    // After the host's first run: adopt two again (the descriptors came back when the loop ran
    // the close callbacks), run an iteration, then, on the host's thread outside any action, shut
    // one down by `shutdown()` and the other by its last release.
    if made > 0 {
        var again: [LoopScheduler] = []
        while again.count < 2, let loop = try? LoopScheduler(adopting: loop) { again.append(loop) }
        let afterRun = Counter()
        for scheduler in again { scheduler.schedule { afterRun.add() } }
        _ = HostUVLoop.runOnce(loop)
        check(afterRun.value == again.count, "adopted: a task did not run in the host's iteration")
        again.first?.syncShutdown()
        again.removeAll()
        HostUVLoop.run(loop)
    }
    let rc = HostUVLoop.close(loop)
    check(rc == 0, "adopted: uv_loop_close returned \(rc): a scheduler left a handle open")
    return (made, failed)
}

/// Every kind in turn, each coming back to `baseline`; at most `cap` of each kind at once (the
/// budget stops them first when it is small).
func everyKind(baseline: Counts, budget: String, cap: Int = 64) {
    let own = ownThread(cap: cap)
    expectSettled(at: baseline, "\(budget), own thread")
    let group = groups(cap: max(1, cap / 4))
    expectSettled(at: baseline, "\(budget), group")
    let caller = callerThread()
    expectSettled(at: baseline, "\(budget), caller thread")
    // Run() must also fail cleanly when the budget is used up by running loops.
    var hold: [LoopScheduler] = []
    while hold.count < cap, let loop = try? LoopScheduler(name: "hold") { hold.append(loop) }
    let callerExhausted = callerThread()
    hold.removeAll()
    expectSettled(at: baseline, "\(budget), caller thread with the budget used up")
    let host = adopted(cap: cap)
    expectSettled(at: baseline, "\(budget), adopted")
    let adoptedText = host.map { "made \($0.made), threw \($0.failed)" } ?? "host loop failed"
    say(
        "\(budget): own thread made \(own.made), threw \(own.failed); groups made \(group.made), threw \(group.failed); "
            + "caller thread ran \(caller), with the budget used up ran \(callerExhausted); adopted \(adoptedText)"
    )
}

// MARK: Main

/// Closes every descriptor above stderr that the parent left open, so the budget is exact.
func closeInherited() {
    for fd in Int32(3)..<1_024 where fd != dirfd(taskDirectory) { close(fd) }
}

/// Starts and joins one plain thread: the thread sanitizer starts a background thread of its own
/// with the process's second thread, which must be in the baseline, not counted as the library's.
/// Without a sanitizer the counts are back where they were.
func startTheSanitizersThread() {
    var thread = pthread_t()
    check(pthread_create(&thread, nil, { _ in nil }, nil) == 0, "pthread_create of the warm-up thread failed")
    check(pthread_join(thread, nil) == 0, "pthread_join of the warm-up thread failed")
}

let arguments = CommandLine.arguments
guard arguments.count >= 2 else { fail("usage: LoopLimitsProbe descriptors SPARE | threads | churn COUNT") }
alarm(60)
closeInherited()
startTheSanitizersThread()
let baseline = Counts.now()
say("baseline: \(baseline) (\(describeDescriptors()))")
if arguments[1] != "threads" { baselineLinks = descriptorLinks() }

switch arguments[1] {
case "descriptors":
    guard arguments.count == 3, let spare = Int(arguments[2]) else { fail("descriptors takes a number") }
    var limit = rlimit()
    getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)
    let original = limit
    // Descriptors 0-2 are open and nothing above: exactly `spare` numbers are free below the limit.
    limit.rlim_cur = rlim_t(baseline.descriptors + spare)
    check(setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0, "setrlimit(NOFILE): errno \(errno)")
    everyKind(baseline: baseline, budget: "\(spare) descriptors free")
    var restored = original
    check(setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &restored) == 0, "restoring NOFILE: errno \(errno)")
    // With the limit lifted, everything works again (a few of each kind show it).
    everyKind(baseline: baseline, budget: "no limit", cap: 8)

case "threads":
    // RLIMIT_NPROC binds only an unprivileged user: become one, with room for two more threads.
    check(getuid() == 0, "threads: needs root to become an unprivileged user")
    // Once the process changed its user it cannot read /proc/self/fd, which tells libuv's signal
    // lock pipe apart: let a bare libuv loop make it first, and count against that.
    guard let warm = HostUVLoop.make() else { fail("threads: uv_loop_init failed") }
    check(HostUVLoop.close(warm) == 0, "threads: uv_loop_close failed")
    let baseline = Counts.now()
    say("with libuv's process-wide signal lock pipe: \(baseline)")
    var limit = rlimit(rlim_cur: rlim_t(baseline.threads + 2), rlim_max: rlim_t(baseline.threads + 2))
    check(setrlimit(__rlimit_resource_t(__RLIMIT_NPROC.rawValue), &limit) == 0, "setrlimit(NPROC): errno \(errno)")
    check(setgroups(0, nil) == 0, "setgroups: errno \(errno)")
    check(setgid(65_534) == 0, "setgid: errno \(errno)")
    check(setuid(65_534) == 0, "setuid: errno \(errno)")
    let own = ownThread()
    check(own.failed, "threads: no pthread_create failed at the limit (made \(own.made)): the test tests nothing")
    everyKind(baseline: baseline, budget: "thread limit \(baseline.threads + 2)")

case "churn":
    guard arguments.count == 3, let count = Int(arguments[2]) else { fail("churn takes a number") }
    for index in 0..<count {
        let loop = try! LoopScheduler(name: "churn")
        if index % 2 == 0 { loop.syncShutdown() }
    }
    expectSettled(at: baseline, "churn of \(count)")
    say("after \(count) schedulers made and released: \(Counts.now())")

default:
    fail("unknown scenario \(arguments[1])")
}
exit(0)
