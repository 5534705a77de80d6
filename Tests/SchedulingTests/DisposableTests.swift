import Dispatch
import Scheduling
import Synchronization
import LoopSchedulingTestSupport
import Testing

@Suite("Disposables")
struct DisposableTests {
    @Test("ActionDisposable runs its action once, on the first dispose, and then releases it")
    func actionDisposable() {
        let runs = Atomic<Int>(0)
        let disposable = ActionDisposable { runs.add(1, ordering: .relaxed) }
        #expect(!disposable.isDisposed)
        disposable.dispose()
        disposable.dispose()
        let count = runs.load(ordering: .relaxed)
        #expect(count == 1)
        #expect(disposable.isDisposed)
    }

    @Test("ActionDisposable() is a plain flag")
    func flag() {
        let flag = ActionDisposable()
        #expect(!flag.isDisposed)
        flag.dispose()
        #expect(flag.isDisposed)
    }

    @Test("Disposables.disposed is already disposed")
    func alreadyDisposed() {
        #expect(Disposables.disposed.isDisposed)
    }

    @Test("CompositeDisposable disposes every entry once, in the order they were added")
    func compositeDisposesAll() {
        let order = LockedValue<[Int]>([])
        let composite = CompositeDisposable()
        for index in 0..<5 { composite.add { order.withLock { $0.append(index) } } }
        #expect(composite.count == 5)
        composite.dispose()
        composite.dispose()
        #expect(order.withLock { $0 } == [0, 1, 2, 3, 4])
        #expect(composite.isDisposed)
        #expect(composite.count == 0)
    }

    @Test("A composite's token removes the entry without disposing it")
    func compositeTokenRemoves() {
        let composite = CompositeDisposable()
        let entry = ActionDisposable()
        let token = composite.add(entry)
        token.dispose()
        #expect(composite.count == 0)
        #expect(!entry.isDisposed)
        composite.dispose()
        #expect(!entry.isDisposed, "a removed entry must not be disposed with the composite")
    }

    @Test("Adding to a disposed composite disposes the new entry at once")
    func addToDisposedComposite() {
        let composite = CompositeDisposable()
        composite.dispose()
        let entry = ActionDisposable()
        let token = composite.add(entry)
        #expect(entry.isDisposed)
        #expect(token.isDisposed)
    }

    @Test("An entry's dispose action may add to the composite without deadlocking")
    func reentrantComposite() {
        let composite = CompositeDisposable()
        let late = ActionDisposable()
        composite.add { composite.add(late) }
        composite.dispose()
        #expect(late.isDisposed)
    }

    @Test("SerialDisposable disposes the old inner one when replaced")
    func serialReplaces() {
        let serial = SerialDisposable()
        let first = ActionDisposable()
        let second = ActionDisposable()
        serial.inner = first
        serial.inner = second
        #expect(first.isDisposed)
        #expect(!second.isDisposed)
        serial.inner = second
        #expect(!second.isDisposed, "setting the same inner disposable again must not dispose it")
        serial.dispose()
        #expect(second.isDisposed)
        #expect(serial.inner == nil)
    }

    @Test("Setting a disposed SerialDisposable's inner disposes the new value at once")
    func serialAfterDispose() {
        let serial = SerialDisposable()
        serial.dispose()
        let late = ActionDisposable()
        serial.inner = late
        #expect(late.isDisposed)
        #expect(serial.isDisposed)
    }

    @Test("ScopedDisposable disposes its inner disposable on deinit")
    func scopedDisposesOnDeinit() {
        let inner = ActionDisposable()
        do {
            let scoped = ScopedDisposable(inner)
            #expect(!scoped.isDisposed)
        }
        #expect(inner.isDisposed)
    }

    @Test("Disposables are thread-safe under concurrent disposal and mutation")
    func concurrentComposite() async {
        let composite = CompositeDisposable()
        let perWorker = 500
        // One dispose counter per entry, and what `add` said about each one.
        let entries = (0..<8 * perWorker).map { _ in EntryRecord() }
        // `concurrentPerform` blocks its caller until every worker is done: a thread made for it.
        await onOwnThread { DispatchQueue.concurrentPerform(iterations: 8) { worker in
            for index in 0..<perWorker {
                let entry = worker * perWorker + index
                let token = composite.add(entries[entry])
                // Added to a disposed composite: the token is inert and the entry was disposed
                // before `add` returned.
                if token.isDisposed {
                    entries[entry].addedAfterDisposal.store(true, ordering: .relaxed)
                    let count = entries[entry].disposals.load(ordering: .relaxed)
                    entries[entry].disposedAtOnce.store(count == 1, ordering: .relaxed)
                }
                if worker % 2 == 0 { token.dispose() }
            }
            if worker == 7 { composite.dispose() }
        } }
        composite.dispose()
        #expect(composite.count == 0)
        for entry in entries.indices {
            let count = entries[entry].disposals.load(ordering: .relaxed)
            #expect(count <= 1, "entry \(entry) was disposed \(count) times")
            if entries[entry].addedAfterDisposal.load(ordering: .relaxed) {
                let atOnce = entries[entry].disposedAtOnce.load(ordering: .relaxed)
                #expect(atOnce, "entry \(entry), added after disposal, was not disposed before add returned")
            } else if (entry / perWorker) % 2 == 1 {
                // Never removed: the composite's dispose must have disposed it, exactly once.
                #expect(count == 1, "entry \(entry) was added to the open composite but never disposed")
            }
        }
        // Entries removed by their token while the composite was open are not disposed, unless the
        // removal lost the race with dispose(): both are legal, so only "at most once" holds there.
    }
}

/// One entry of the concurrent composite test: a disposable that counts every `dispose()` call
/// (an `ActionDisposable` would hide a second call), and what `add` said about it.
private final class EntryRecord: Disposable {
    let disposals = Atomic<Int>(0)
    let addedAfterDisposal = Atomic<Bool>(false)
    let disposedAtOnce = Atomic<Bool>(false)

    var isDisposed: Bool { disposals.load(ordering: .relaxed) > 0 }
    func dispose() { disposals.add(1, ordering: .relaxed) }
}
