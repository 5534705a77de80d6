#if ServiceLifecycle
import Foundation
import LoopScheduling
import LoopSchedulingTestSupport
import Logging
import Scheduling
import ServiceLifecycle

/// A logger that writes nothing: `ServiceGroup` requires one; the test log stays readable.
let quietLogger = Logger(label: "scheduling-service-tests", factory: { _ in SwiftLogNoOpLogHandler() })

/// The outcome of `task`, which is cancelled if the waiting test is (as by its time limit): a
/// service that failed to end by itself then ends by cancellation, and the test fails on the time
/// limit instead of hanging.
func ended(_ task: Task<Void, any Error>) async throws {
    try await withTaskCancellationHandler {
        try await task.value
    } onCancel: {
        task.cancel()
    }
}

/// Whether `loop` refuses new work, as it does once shutdown began.
func refusesWork(_ loop: LoopScheduler) -> Bool {
    loop.schedule {}.isDisposed
}

/// What a loop looked like when its service ended: probes armed before `run()`.
final class ShutdownProbe: Sendable {
    let loop: LoopScheduler
    private let gate = SchedulerGate()
    private let acceptedRan = LockedValue(false)
    private let timerRan = LockedValue(false)
    private let timer: any Disposable

    /// Blocks the loop, queues a task behind the block and arms a far timer. The block lifts once
    /// shutdown has begun (the loop refuses new work), so the queued task is still waiting then:
    /// a shutdown that dropped accepted work would be caught.
    init(_ loop: LoopScheduler) {
        self.loop = loop
        let gate = self.gate
        let acceptedRan = self.acceptedRan
        let timerRan = self.timerRan
        gate.close(loop)
        loop.schedule { acceptedRan.withLock { $0 = true } }
        timer = loop.schedule(after: .seconds(3600)) { timerRan.withLock { $0 = true } }
        Task {
            _ = await eventually { refusesWork(loop) }
            gate.letGo()
        }
    }

    /// The accepted task ran.
    var ranAcceptedTask: Bool { acceptedRan.withLock { $0 } }
    /// The pending timer was disposed and never ran.
    var disposedTimer: Bool { timer.isDisposed && !timerRan.withLock { $0 } }
}

/// A service that fails once `trigger` is signalled.
struct FailingService: Service {
    struct Failure: Error, Equatable {}
    let trigger: @Sendable () async -> Void

    func run() async throws {
        await trigger()
        throw Failure()
    }
}

/// A one-shot async signal.
final class Signal: Sendable {
    private let continuation: AsyncStream<Void>.Continuation
    private let stream: AsyncStream<Void>

    init() {
        (stream, continuation) = AsyncStream.makeStream(of: Void.self)
    }

    func fire() { continuation.finish() }

    func wait() async {
        for await _ in stream {}
    }
}
#endif
