/// A part of one loop's engine (``LoopCore``): the batch runner, the timer filing, the entry
/// recycler, the reporter. Each owns state that only the loop thread touches, reached only
/// through ``state``, which asserts the loop thread in debug builds.
///
/// Accesses to ``state`` are short and never span user code: a part that runs actions moves what
/// it runs out of its state first (a queue buffer swapped into a local, a timer popped), so an
/// action that schedules more work — which reaches the same state — never overlaps an access.
///
/// Not `Sendable`: a part is reached only through its ``LoopCore``, whose cross-thread surface is
/// the remote queue.
class LoopPart<State> {
    /// The engine; set once by its `init` (``bind(to:)``), before the engine is shared with any
    /// other thread. Unowned: the engine owns its parts.
    private(set) unowned(unsafe) var core: LoopCore!
    // Loop-confined as described above, never in overlapping accesses, so the runtime's
    // exclusivity bookkeeping (a thread-local look-up per access, measured at 6% of the loop's
    // time) is off.
    @exclusivity(unchecked) private var _state: State

    init(_ state: State) {
        _state = state
    }

    final func bind(to core: LoopCore) {
        self.core = core
    }

    /// The loop-confined state. Debug builds stop the program when it is reached off the loop
    /// thread.
    final var state: State {
        @inline(__always) _read {
            core.assertOnLoopThread()
            yield _state
        }
        @inline(__always) _modify {
            core.assertOnLoopThread()
            yield &_state
        }
    }
}
