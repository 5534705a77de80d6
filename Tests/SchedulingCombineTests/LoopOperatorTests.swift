#if OpenCombine
import Foundation
import LoopScheduling
import LoopSchedulingTestSupport
import OpenCombine
import Scheduling
import SchedulingCombine
import Testing

/// OpenCombine's operators on a real LoopScheduler: order, thread and never-early, not exact
/// timing (the machine is shared; waits are generous).
@Suite("Combine operators on a loop")
struct LoopOperatorTests {
    /// The loop's monotonic clock, read on any thread.
    static func now(_ loop: LoopScheduler) -> Int64 { loop.combine.now.nanoseconds }

    /// Runs `body` with a fresh loop, shut down afterwards.
    static func withLoop(_ body: (LoopScheduler) async throws -> Void) async throws {
        let loop = try LoopScheduler(name: "combine-test")
        try await shuttingDown(loop) { try await body(loop) }
    }

    @Test("receive(on:) delivers every value on the loop thread, in order")
    func receiveOn() async throws {
        try await Self.withLoop { loop in
            let subject = PassthroughSubject<Int, Never>()
            let recorder = Recorder<Int>()
            let onLoop = LockedValue(true)
            let subscription = subject.receive(on: loop.combine).sink { value in
                onLoop.withLock { $0 = $0 && loop.isCurrent }
                recorder.append(value, at: 0)
            }
            for value in 0..<200 { subject.send(value) }
            #expect(await recorder.wait(for: 200))
            #expect(recorder.values == Array(0..<200))
            #expect(onLoop.withLock { $0 })
            subscription.cancel()
        }
    }

    @Test("delay never delivers early, and keeps the order")
    func delay() async throws {
        try await Self.withLoop { loop in
            let subject = PassthroughSubject<Int64, Never>()
            let recorder = Recorder<Int64>()
            let subscription = subject.delay(for: .milliseconds(20), scheduler: loop.combine).sink { sentAt in
                recorder.append(sentAt, at: Self.now(loop))
            }
            for _ in 0..<5 { subject.send(Self.now(loop)) }
            #expect(await recorder.wait(for: 5))
            let sent = recorder.values
            #expect(sent == sent.sorted())
            for (sentAt, receivedAt) in zip(sent, recorder.times) {
                #expect(receivedAt - sentAt >= ns(0.020))
            }
            subscription.cancel()
        }
    }

    @Test("debounce delivers only the last of a burst, a full interval after it")
    func debounce() async throws {
        try await Self.withLoop { loop in
            let subject = PassthroughSubject<Int, Never>()
            let recorder = Recorder<Int>()
            let lastSend = LockedValue<Int64>(0)
            let subscription = subject.debounce(for: .milliseconds(30), scheduler: loop.combine).sink {
                recorder.append($0, at: Self.now(loop))
            }
            // The burst comes from the loop itself, so the debounce timer cannot fire in between.
            let burst = Unchecked(subject)
            loop.schedule {
                for value in 1...9 { burst.value.send(value) }
                // Read before the last send arms the timer: a reading after it could be a
                // preemption later than the arming, and the gap would look short by that much.
                lastSend.withLock { $0 = Self.now(loop) }
                burst.value.send(10)
            }
            #expect(await recorder.wait(for: 1))
            #expect(recorder.values == [10])
            #expect(recorder.times[0] - lastSend.withLock { $0 } >= ns(0.030))
            subscription.cancel()
        }
    }

    @Test("throttle delivers the first value, then the latest no earlier than an interval later")
    func throttle() async throws {
        try await Self.withLoop { loop in
            let subject = PassthroughSubject<Int, Never>()
            let recorder = Recorder<Int>()
            let subscription = subject.throttle(for: .milliseconds(40), scheduler: loop.combine, latest: true).sink {
                recorder.append($0, at: Self.now(loop))
            }
            let sender = Unchecked(subject)
            let firstSent = LockedValue<Int64>(0)
            loop.schedule {
                firstSent.withLock { $0 = Self.now(loop) }
                sender.value.send(1)
            }
            #expect(await recorder.wait(for: 1))
            // A burst after the first emission: only its latest value comes, an interval later.
            loop.schedule { for value in 2...10 { sender.value.send(value) } }
            #expect(await recorder.wait(for: 2))
            #expect(recorder.values == [1, 10])
            #expect(recorder.times.last! - firstSent.withLock { $0 } >= ns(0.040))
            subscription.cancel()
        }
    }

    @Test("timeout finishes no earlier than the interval after subscription")
    func timeout() async throws {
        try await Self.withLoop { loop in
            let subject = PassthroughSubject<Int, Never>()
            let finished = Recorder<Int>()
            let subscribedAt = Self.now(loop)
            let subscription = subject.timeout(.milliseconds(25), scheduler: loop.combine).sink(
                receiveCompletion: { _ in finished.append(0, at: Self.now(loop)) },
                receiveValue: { _ in }
            )
            #expect(await finished.wait(for: 1))
            #expect(finished.times[0] - subscribedAt >= ns(0.025))
            subscription.cancel()
        }
    }

    @Test("measureInterval measures the loop's monotonic time between events")
    func measureInterval() async throws {
        try await Self.withLoop { loop in
            let subject = PassthroughSubject<Int, Never>()
            let recorder = Recorder<Int64>()
            let subscription = subject.measureInterval(using: loop.combine).sink {
                recorder.append($0.nanoseconds, at: 0)
            }
            let sender = Unchecked(subject)
            loop.schedule(after: .milliseconds(15)) { sender.value.send(1) }
            loop.schedule(after: .milliseconds(30)) { sender.value.send(2) }
            #expect(await recorder.wait(for: 2))
            let intervals = recorder.values
            #expect(intervals[0] >= ns(0.015))
            // Both intervals are on the loop's clock from the subscription: together they span at
            // least the second send's 30 ms, however late the first fired.
            #expect(intervals[1] >= 0, "a monotonic interval came out negative")
            #expect(intervals[0] + intervals[1] >= ns(0.030))
            subscription.cancel()
        }
    }

    @Test("A periodic action ticks on the loop until cancelled there")
    func periodic() async throws {
        try await Self.withLoop { loop in
            let recorder = Recorder<Int>()
            let scheduler = loop.combine
            let start = scheduler.now
            let timer = Unchecked(
                scheduler.schedule(after: start.advanced(by: .milliseconds(5)), interval: .milliseconds(5)) {
                    recorder.append(0, at: Self.now(loop))
                }
            )
            #expect(await recorder.wait(for: 3))
            for (index, time) in recorder.times.enumerated() {
                #expect(time - start.nanoseconds >= ns(0.005) * Int64(index + 1), "tick \(index) early")
            }
            // Cancelled on the loop thread, no tick starts afterwards.
            let countAtCancel = LockedValue(0)
            let marker = Recorder<Int>()
            loop.schedule {
                timer.value.cancel()
                countAtCancel.withLock { $0 = recorder.count }
                loop.schedule(after: .milliseconds(30)) { marker.append(0, at: 0) }
            }
            #expect(await marker.wait(for: 1))
            #expect(recorder.count == countAtCancel.withLock { $0 })
        }
    }
}
#endif
