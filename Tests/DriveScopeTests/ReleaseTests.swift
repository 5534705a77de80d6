import Foundation
import Scheduling
import Synchronization
import Testing

/// A scheduler released under the scope, on another thread, while other schedulers drive.
@Suite("drive's scope: a scheduler released under it")
struct ReleaseTests {
    @Test("Schedulers released on another thread while drives run, a pending closure's release enqueuing a job: 1,000 rounds, no hang")
    func releasedOnAnotherThread() async throws {
        for _ in 0..<1_000 {
            let holder = Holder(makeTestScheduler())
            try await holder.scheduler!.drive { await Task {}.value }  // a scope with members
            // A task on the pool waits for the closure's release: resuming it is a global enqueue.
            let (parked, feed) = AsyncStream<CheckedContinuation<Void, Never>>.makeStream()
            let waiter = Task.detached { await withCheckedContinuation { feed.yield($0) } }
            var iterator = parked.makeAsyncIterator()
            let continuation = await iterator.next()!
            holder.scheduler!.schedule(after: .seconds(1)) { [resumer = Resumer(continuation)] in _ = resumer }
            // The last reference goes on a thread of its own while this task drives others.
            weak let gone = holder.scheduler
            let released = releaseOnItsOwnThread(holder)
            for _ in 0..<2 {
                let test = makeTestScheduler()
                let slept = try await test.drive {
                    await Task { (try? await test.sleep(for: .zero)) != nil }.value
                }
                #expect(slept, "a taken-in sleep at the current instant did not return")
            }
            await released.value
            #expect(gone == nil, "the scheduler outlived its last reference")
            await waiter.value  // the closure was released, its resumer with it
        }
    }

    /// Sets the holder's scheduler to nil on a thread made for it; the task ends when it has.
    private func releaseOnItsOwnThread(_ holder: Holder) -> Task<Void, Never> {
        let (done, feed) = AsyncStream<Void>.makeStream()
        Thread {
            holder.scheduler = nil
            feed.finish()
        }.start()
        return Task { for await _ in done {} }
    }
}

/// Holds a scheduler a test releases on another thread.
private final class Holder: @unchecked Sendable {  // written once by one thread, after the writer's hand-over
    var scheduler: TestScheduler?
    init(_ scheduler: TestScheduler) { self.scheduler = scheduler }
}

/// Resumes a waiting task when released.
private final class Resumer: Sendable {
    private let continuation: CheckedContinuation<Void, Never>
    init(_ continuation: CheckedContinuation<Void, Never>) { self.continuation = continuation }
    deinit { continuation.resume() }
}
