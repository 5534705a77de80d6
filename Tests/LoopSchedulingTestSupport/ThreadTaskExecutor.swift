import Foundation
import Synchronization

/// A task executor with one thread of its own, which runs the jobs it is given one at a time: how a
/// test runs async code that must stay on one thread — a SwiftNIO `EmbeddedEventLoop` may be used
/// only from the thread that made it. In `withTaskExecutorPreference(executor) { … }` the body's
/// nonisolated code, and the loop it drives, run on that thread between suspensions.
public final class ThreadTaskExecutor: TaskExecutor, Sendable {
    private struct State {
        var jobs: [UnownedJob] = []
        var stopping = false
    }

    private let state = Mutex(State())
    private let condition = NSCondition()
    private let finished = Atomic<Bool>(false)

    /// Starts the thread, named `name`.
    public init(name: String) {
        let thread = Thread { [self] in runJobs() }
        thread.name = name
        thread.start()
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        state.withLock { $0.jobs.append(job) }
        condition.signal()
        condition.unlock()
    }

    /// Ends the thread once the jobs queued so far ran; returns at once (the thread is not joined).
    public func stop() {
        condition.lock()
        state.withLock { $0.stopping = true }
        condition.signal()
        condition.unlock()
    }

    private func runJobs() {
        while true {
            condition.lock()
            var next = state.withLock { state -> (jobs: [UnownedJob], stop: Bool) in
                defer { state.jobs = [] }
                return (state.jobs, state.stopping)
            }
            while next.jobs.isEmpty && !next.stop {
                condition.wait()
                next = state.withLock { state -> (jobs: [UnownedJob], stop: Bool) in
                    defer { state.jobs = [] }
                    return (state.jobs, state.stopping)
                }
            }
            condition.unlock()
            for job in next.jobs { job.runSynchronously(on: asUnownedTaskExecutor()) }
            if next.stop && next.jobs.isEmpty { break }
        }
        finished.store(true, ordering: .releasing)
    }
}
