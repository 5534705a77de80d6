/// Loop-confined state: reached only through ``value``, which asserts the loop thread in debug
/// builds (against the engine's ``LoopThreadIdentity``). Each part of the engine (the batch
/// runner, the timer filing, the entry recycler, the reporter) keeps its state in one of these, in
/// an `@exclusivity(unchecked)` property.
///
/// A part holds no reference to the engine: the engine hands itself to each call (`core`), a
/// borrowed parameter that costs no retain. Parts that each held the engine (unowned) paid a
/// retain and a release per call and tripled the cost of a job hopping on the loop thread (282 →
/// 805 ns per same-loop actor call). Parts are not `Sendable`: they are reached only through the
/// engine, whose cross-thread surface is the remote queue.
///
/// Accesses to the value are short and never span user code: a part that runs actions moves what
/// it runs out of its state first (a queue buffer swapped into a local, a timer popped), so an
/// action that schedules more work — which reaches the same state — never overlaps an access, and
/// the runtime's exclusivity bookkeeping (a thread-local look-up per access, measured at 6% of the
/// loop's time) can be off.
package struct LoopConfined<Value: ~Copyable>: ~Copyable {
    private let loopThread: LoopThreadIdentity
    private var _value: Value

    init(_ value: consuming Value, loopThread: LoopThreadIdentity) {
        self.loopThread = loopThread
        _value = value
    }

    /// The state. Debug builds stop the program when it is reached off the loop thread.
    var value: Value {
        @inline(__always) _read {
            loopThread.assertCurrent()
            yield _value
        }
        @inline(__always) _modify {
            loopThread.assertCurrent()
            yield &_value
        }
    }
}
