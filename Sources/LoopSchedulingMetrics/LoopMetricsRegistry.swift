#if Metrics
import CoreMetrics
import LoopScheduling
import Scheduling
import Synchronization

/// One loop name's metric objects, made once.
final class LoopMetricHandles: Sendable {
    let loopName: String
    let tasksRun: Counter
    let timersFired: Counter
    let disposedBeforeRun: Counter
    let iterations: Counter
    let timersPending: Gauge
    let timerLateness: CoreMetrics.Timer
    let sleep: CoreMetrics.Timer
    /// The last value given to the Gauge (-1: none yet), so an unchanged count is not re-recorded.
    /// Atomic because loops that share a name share these handles.
    private let lastPending = Atomic<Int>(-1)

    init(loopName: String, prefix: String, factory: any MetricsFactory) {
        self.loopName = loopName
        let dimensions = [("loop", loopName)]
        func label(_ metric: LoopMetrics.Metric) -> String { prefix + metric.rawValue }
        tasksRun = Counter(label: label(.tasksRun), dimensions: dimensions, factory: factory)
        timersFired = Counter(label: label(.timersFired), dimensions: dimensions, factory: factory)
        disposedBeforeRun = Counter(label: label(.disposedBeforeRun), dimensions: dimensions, factory: factory)
        iterations = Counter(label: label(.iterations), dimensions: dimensions, factory: factory)
        timersPending = Gauge(label: label(.timersPending), dimensions: dimensions, factory: factory)
        timerLateness = CoreMetrics.Timer(label: label(.timerLateness), dimensions: dimensions, factory: factory)
        sleep = CoreMetrics.Timer(label: label(.sleep), dimensions: dimensions, factory: factory)
    }

    /// Records one iteration (see ``LoopMetrics`` for what is recorded when).
    func record(_ info: LoopIterationInfo) {
        iterations.increment()
        if info.tasksRun > 0 { tasksRun.increment(by: info.tasksRun) }
        if info.timersFired > 0 {
            timersFired.increment(by: info.timersFired)
            timerLateness.recordNanoseconds(Nanoseconds.of(info.maxLateness))
        }
        if info.disposedBeforeRun > 0 { disposedBeforeRun.increment(by: info.disposedBeforeRun) }
        if lastPending.exchange(info.timersPending, ordering: .relaxed) != info.timersPending {
            timersPending.record(info.timersPending)
        }
        if let slept = info.sleepTime { sleep.recordNanoseconds(Nanoseconds.of(slept)) }
    }
}

/// The handles of every loop name seen, found without a lock or an allocation.
///
/// An immutable linked list, newest name first, published through an atomic pointer. Nodes are
/// only ever prepended and the list's head is also held strongly under `lock`, so a node a reader
/// reached stays alive for the registry's life: readers walk it without retaining anything. A
/// miss (a loop's first iteration) takes the lock, checks again and prepends.
final class LoopMetricsRegistry: Sendable {
    private final class Node: Sendable {
        let handles: LoopMetricHandles
        let next: Node?
        init(handles: LoopMetricHandles, next: Node?) {
            self.handles = handles
            self.next = next
        }
    }

    private let prefix: String
    private let factory: any MetricsFactory
    /// The list head, strongly held; written under the lock only. (`LockedValue`, not `Mutex`: the
    /// thread sanitizer cannot see `Mutex`'s futex on Linux.)
    private let lock = LockedValue<Node?>(nil)
    /// The same head, for lock-free readers (published with release, read with acquire).
    private let head = Atomic<Unmanaged<Node>?>(nil)

    init(prefix: String, factory: any MetricsFactory) {
        self.prefix = prefix
        self.factory = factory
    }

    /// Runs `body` with the handles of `loopName`, making them on the name's first use.
    func withHandles(for loopName: String, _ body: (LoopMetricHandles) -> Void) {
        if let node = head.load(ordering: .acquiring), Self.find(loopName, from: node, body) { return }
        body(insert(loopName))
    }

    /// Scans the list from `start` without retaining: the nodes are kept alive by `lock`'s head.
    private static func find(_ loopName: String, from start: Unmanaged<Node>, _ body: (LoopMetricHandles) -> Void) -> Bool {
        var current: Unmanaged<Node>? = start
        while let node = current {
            let found = node._withUnsafeGuaranteedRef { node -> Bool in
                // Same storage as the loop's `name` (it was copied from the first info): `==`
                // answers from the string's identity, without comparing bytes.
                guard node.handles.loopName == loopName else { return false }
                body(node.handles)
                return true
            }
            if found { return true }
            current = node._withUnsafeGuaranteedRef { $0.next.map { Unmanaged.passUnretained($0) } }
        }
        return false
    }

    /// The slow path: makes the handles of `loopName` once, even if two loops race to it. The
    /// factory runs under the lock so a name's metric objects are made exactly once; it never
    /// calls back into the registry.
    private func insert(_ loopName: String) -> LoopMetricHandles {
        lock.withLock { first in
            var current = first
            while let node = current {
                if node.handles.loopName == loopName { return node.handles }
                current = node.next
            }
            let handles = LoopMetricHandles(loopName: loopName, prefix: prefix, factory: factory)
            let node = Node(handles: handles, next: first)
            first = node
            head.store(Unmanaged.passUnretained(node), ordering: .releasing)
            return handles
        }
    }
}
#endif
