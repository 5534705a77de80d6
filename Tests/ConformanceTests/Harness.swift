import Foundation
import LoopScheduling
import LoopSchedulingTestSupport
import Scheduling
import Synchronization
import Testing

/// Every scheduler the behaviour contract is checked against.
enum SchedulerKind: String, Codable, Sendable, CustomTestStringConvertible {
    case immediate, queue, concurrentQueue, subscription, test, loop, loopCallerThread, loopAdopted
    /// A loop on its own thread whose timers are driven by one `uv_timer_t` (millisecond timeouts,
    /// re-checked against the clock): the driver of every platform without `timerfd`.
    case loopUVTimer
    /// `EventLoopScheduler` on SwiftNIO's event loop (NIOPosix, one thread), on an
    /// `EmbeddedEventLoop` (its creating thread, virtual time), and on a `NIOAsyncTestingEventLoop`
    /// (virtual time, any thread): trait NIO.
    case eventLoop, embeddedLoop, asyncTestingLoop

    var testDescription: String { rawValue }

    static let allCases: [SchedulerKind] = {
        var kinds: [SchedulerKind] = [
            .immediate, .queue, .concurrentQueue, .subscription, .test, .loop, .loopCallerThread, .loopAdopted,
            .loopUVTimer,
        ]
        #if NIO
        kinds += nioLoops
        #endif
        return kinds
    }()

    /// The SwiftNIO event loops (`SchedulingNIO`'s `EventLoopScheduler`), with the trait NIO.
    static let nioLoops: [SchedulerKind] = [.eventLoop, .embeddedLoop, .asyncTestingLoop]
    /// SwiftNIO's testing loops, whose time the test moves (`advanceTime`).
    static let virtualLoops: [SchedulerKind] = [.embeddedLoop, .asyncTestingLoop]

    static let dateSchedulers: [SchedulerKind] = allCases.filter { $0 != .immediate }
    /// Schedulers that run actions later, on their own context (not inline in `schedule`).
    static let deferred: [SchedulerKind] = allCases.filter { $0 != .immediate }
    /// Serial: one action at a time, FIFO per scheduling thread.
    static let serial: [SchedulerKind] = [.queue, .subscription, .test] + loops + allCases.filter(nioLoops.contains)
    static let loops: [SchedulerKind] = [.loop, .loopCallerThread, .loopAdopted, .loopUVTimer]
    /// Serial schedulers whose `schedule` never runs the action inline. The subscription scheduler
    /// runs it inline when there is a current scheduler, by definition (rule 7).
    static let neverInline: [SchedulerKind] = serial.filter { $0 != .subscription }

    /// A scheduler whose time the test moves: the test scheduler, and SwiftNIO's testing loops.
    var isVirtual: Bool { self == .test || SchedulerKind.virtualLoops.contains(self) }

    /// A scheduler that runs its actions on the test's own thread, inside `advance` (the test
    /// scheduler, the `EmbeddedEventLoop`): an action there must never block waiting for the test.
    var runsOnTestThread: Bool { self == .test || self == .embeddedLoop }

    /// The kinds of `kinds` that run on real threads and real time only: without SwiftNIO's
    /// testing loops, for the tests that wait in real time, step the wall clock or need another
    /// thread (the article *SwiftNIO event loops* lists them).
    static func realTime(_ kinds: [SchedulerKind]) -> [SchedulerKind] {
        kinds.filter { !virtualLoops.contains($0) }
    }

    /// The kinds of `kinds` that may be reached from other threads: without the
    /// `EmbeddedEventLoop`, which may be used only from the thread that made it.
    static func crossThread(_ kinds: [SchedulerKind]) -> [SchedulerKind] {
        kinds.filter { $0 != .embeddedLoop }
    }

    /// The kinds of `kinds` for the tests of async waiting and executors: without the
    /// `EmbeddedEventLoop`, whose thread is its creator's, while tasks resume on any thread.
    static func async(_ kinds: [SchedulerKind]) -> [SchedulerKind] {
        kinds.filter { $0 != .embeddedLoop }
    }
}

/// A scheduler under test, with the means to wait for it without holding a thread of the
/// cooperative pool: real schedulers are waited on by polling with a generous budget; the test
/// scheduler is driven through virtual time.
final class Harness: Sendable {
    let kind: SchedulerKind
    let scheduler: any Scheduler
    /// What `Schedulers.current` must be while one of its actions runs.
    let expectedCurrent: (any Scheduler)?
    /// The clock of a SwiftNIO testing loop, which the harness moves (nil for the others).
    let virtualLoop: (any VirtualLoop)?
    private let teardown: @Sendable () async -> Void

    init(
        kind: SchedulerKind,
        scheduler: any Scheduler,
        expectedCurrent: (any Scheduler)?,
        virtualLoop: (any VirtualLoop)? = nil,
        teardown: @escaping @Sendable () async -> Void = {}
    ) {
        self.kind = kind
        self.scheduler = scheduler
        self.expectedCurrent = expectedCurrent
        self.virtualLoop = virtualLoop
        self.teardown = teardown
    }

    static func make(_ kind: SchedulerKind) async throws -> Harness {
        switch kind {
        case .immediate:
            return Harness(kind: kind, scheduler: ImmediateScheduler(), expectedCurrent: nil)
        case .queue:
            let scheduler = QueueScheduler(name: "conformance.queue")
            return Harness(kind: kind, scheduler: scheduler, expectedCurrent: scheduler)
        case .concurrentQueue:
            let scheduler = ConcurrentQueueScheduler(name: "conformance.concurrent")
            return Harness(kind: kind, scheduler: scheduler, expectedCurrent: scheduler)
        case .subscription:
            // Called from test threads with no current scheduler: its work goes to its background.
            let scheduler = SubscriptionScheduler()
            return Harness(kind: kind, scheduler: scheduler, expectedCurrent: scheduler.background)
        case .test:
            let scheduler = TestScheduler(now: Date())
            return Harness(kind: kind, scheduler: scheduler, expectedCurrent: scheduler)
        case .loop:
            let scheduler = try LoopScheduler(name: "conformance")
            return Harness(kind: kind, scheduler: scheduler, expectedCurrent: scheduler) { await scheduler.shutdown() }
        case .loopUVTimer:
            let scheduler = try LoopScheduler(name: "conformance.uv", clock: SystemClock(), driver: .uvTimer)
            return Harness(kind: kind, scheduler: scheduler, expectedCurrent: scheduler) { await scheduler.shutdown() }
        case .loopCallerThread:
            // `run(name:)` blocks its caller until shutdown: a thread made for it.
            let (handOver, give) = AsyncStream.makeStream(of: LoopScheduler.self)
            let returned = Task {
                await onOwnThread(name: "conformance.run") {
                    try! LoopScheduler.run(name: "conformance.run") { scheduler in give.yield(scheduler) }
                }
            }
            var schedulers = handOver.makeAsyncIterator()
            let scheduler = await schedulers.next()!
            return Harness(kind: kind, scheduler: scheduler, expectedCurrent: scheduler) {
                await scheduler.shutdown()
                await returned.value
            }
        case .loopAdopted:
            let (host, scheduler) = try await HostLoop.start(name: "conformance.host") { loop in
                try LoopScheduler(adopting: loop)
            }
            return Harness(kind: kind, scheduler: scheduler, expectedCurrent: scheduler) {
                await scheduler.shutdown()
                let rc = await host.finished()
                #expect(rc == 0, "uv_loop_close of the host loop returned \(rc): a handle was left open")
            }
        case .eventLoop, .embeddedLoop, .asyncTestingLoop:
            #if NIO
            return try await makeOnEventLoop(kind)
            #else
            fatalError("\(kind) needs the trait NIO")
            #endif
        }
    }

    /// Runs `body` with a fresh harness and tears it down afterwards, also when `body` throws.
    static func with(_ kind: SchedulerKind, _ body: (Harness) async throws -> Void) async throws {
        #if NIO
        if kind == .embeddedLoop {
            try await onEmbeddedLoopThread { try await run(kind, body) }
            return
        }
        #endif
        try await run(kind, body)
    }

    private static func run(_ kind: SchedulerKind, _ body: (Harness) async throws -> Void) async throws {
        let harness = try await make(kind)
        do {
            try await body(harness)
        } catch {
            await harness.teardown()
            throw error
        }
        await harness.teardown()
    }

    var dateScheduler: any DateScheduler { scheduler as! any DateScheduler }
    var testScheduler: TestScheduler? { scheduler as? TestScheduler }

    /// The clock the contract is stated in: virtual for the test scheduler, monotonic otherwise.
    func monotonicNow() -> Int64 {
        if let testScheduler { return testScheduler.virtualNanoseconds }
        if let virtualLoop { return virtualLoop.nanoseconds }
        return Nanoseconds.monotonicNow()
    }

    /// The wall clock as the scheduler sees it, in the same unit as ``due(_:)``.
    func wallNow() -> Int64 {
        if let testScheduler { return testScheduler.virtualNanoseconds }
        return Nanoseconds.wallNow()
    }

    /// When an `at: date` action is due, in the unit of ``wallNow()`` (nanoseconds since 1970 on
    /// every scheduler, the test scheduler's virtual clock included).
    func due(_ date: Date) -> Int64 {
        Nanoseconds.sinceEpoch(date)
    }

    /// Waits until `condition` holds without blocking a thread of the cooperative pool: real
    /// schedulers through the tests' one polling helper, ``eventually(timeout:every:_:)``; the
    /// test scheduler up to `timeout` of virtual time, advanced a millisecond at a time (its
    /// actions and tasks run inside).
    @discardableResult
    func eventually(timeout: Duration = .seconds(20), _ condition: () -> Bool) async -> Bool {
        if testScheduler == nil && virtualLoop == nil {
            return await LoopSchedulingTestSupport.eventually(timeout: timeout, condition)
        }
        let limit = Nanoseconds.of(timeout)
        var elapsed: Int64 = 0
        while !condition() {
            if elapsed >= limit { return false }
            await advance(by: .milliseconds(1))
            elapsed += 1_000_000
        }
        return true
    }

    /// Moves a virtual clock (the test scheduler's, a SwiftNIO testing loop's), running what falls due.
    func advance(by duration: Duration) async {
        if let testScheduler { testScheduler.advance(by: duration) }
        if let virtualLoop { await virtualLoop.advance(by: duration) }
    }

    /// Lets `duration` pass on the scheduler's own clock by waiting for a sentinel timer (virtual
    /// time simply advances). Anything due earlier on a serial scheduler has run by then.
    func letTimePass(_ duration: Duration) async {
        if kind.isVirtual {
            await advance(by: duration)
            return
        }
        let done = Atomic<Bool>(false)
        dateScheduler.schedule(after: duration) { done.store(true, ordering: .releasing) }
        let passed = await eventually { done.load(ordering: .acquiring) }
        #expect(passed, "the sentinel timer did not fire on \(kind)")
    }
}

/// A thread-safe log of events.
final class Recorder<Value: Sendable>: Sendable {
    private let values = LockedValue<[Value]>([])
    private let harness: Harness

    init(_ harness: Harness) {
        self.harness = harness
    }

    func append(_ value: Value) {
        values.withLock { $0.append(value) }
    }

    var all: [Value] { values.withLock { $0 } }
    var count: Int { values.withLock { $0.count } }

    /// Waits until at least `count` values were recorded (see ``Harness/eventually(timeout:_:)``).
    @discardableResult
    func wait(for count: Int, timeout: Duration = .seconds(20)) async -> Bool {
        await harness.eventually(timeout: timeout) { self.count >= count }
    }
}

/// An object whose lifetime the tests watch through a weak reference.
final class Tracked: Sendable {}

/// A weak reference that can cross threads.
final class WeakBox: Sendable {
    private let reference: LockedValue<WeakReference>

    private struct WeakReference {
        weak var object: Tracked?
    }

    init(_ object: Tracked) {
        reference = LockedValue(WeakReference(object: object))
    }

    var isNil: Bool { reference.withLock { $0.object == nil } }
}

/// A slot to hand a disposable to the action it cancels.
final class DisposableSlot: Sendable {
    private let slot = LockedValue<(any Disposable)?>(nil)
    var value: (any Disposable)? {
        get { slot.withLock { $0 } }
        set { slot.withLock { $0 = newValue } }
    }
}

/// A weak reference to a disposable, to see whether a scheduler still holds it.
final class WeakDisposable: Sendable {
    private struct WeakReference {
        weak var object: (any Disposable)?
    }

    private let reference = LockedValue(WeakReference())

    var value: (any Disposable)? {
        get { reference.withLock { $0.object } }
        set { reference.withLock { $0.object = newValue } }
    }
}
