/// A part of one loop's engine (``LoopCore``): the batch runner, the timer filing, the entry
/// recycler, the reporter. Each owns state that only the loop thread touches, reached only
/// through its `state` accessor, which calls ``assertConfined(_:)`` (debug builds: the loop
/// thread).
///
/// Accesses to the state are short and never span user code: a part that runs actions moves what
/// it runs out of its state first (a queue buffer swapped into a local, a timer popped), so an
/// action that schedules more work — which reaches the same state — never overlaps an access. So
/// each part keeps its state in an `@exclusivity(unchecked)` property: the runtime's exclusivity
/// bookkeeping (a thread-local look-up per access, measured at 6% of the loop's time) is off.
///
/// A part holds no reference to its engine: the engine hands itself to each call (`core`), a
/// borrowed parameter that costs no retain. Parts that each held the engine (unowned) paid a
/// retain and a release per call and tripled the cost of a job hopping on the loop thread (282 →
/// 805 ns per same-loop actor call). Not `Sendable`: a part is reached only through its engine,
/// whose cross-thread surface is the remote queue.
class LoopPart {
    /// Which thread is the loop's, for the debug-build assertion.
    let loopThread: LoopThreadIdentity

    init(loopThread: LoopThreadIdentity) {
        self.loopThread = loopThread
    }

    /// Debug builds stop the program when loop-confined state is reached off the loop thread.
    @inline(__always)
    final func assertConfined(_ function: StaticString = #function) {
        loopThread.assertCurrent(function)
    }
}
