import Dispatch
import Scheduling
import Synchronization
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
    func concurrentComposite() {
        let composite = CompositeDisposable()
        let disposed = Atomic<Int>(0)
        DispatchQueue.concurrentPerform(iterations: 8) { worker in
            for _ in 0..<500 {
                let token = composite.add { disposed.add(1, ordering: .relaxed) }
                if worker % 2 == 0 { token.dispose() }
            }
            if worker == 7 { composite.dispose() }
        }
        composite.dispose()
        // Every entry added to an open composite and not removed is disposed exactly once; those
        // added after disposal are disposed at once. None twice.
        let count = disposed.load(ordering: .relaxed)
        #expect(count <= 8 * 500)
        #expect(composite.count == 0)
    }
}
