/// Which submission from another thread wakes the loop: the rule in one place, a value the
/// ``RemoteQueue`` keeps under its lock and the tests drive without a loop (`LoopWakeRuleTests`).
///
/// Tasks and jobs wake the loop when no wake-up is pending (``wakePending`` stays set until the
/// loop takes the queue). Timers, cancellations and re-arms often need none, which matters because
/// a `withTimeout` or a cancelled `sleep` from the global pool is one of each, and a wake-up per
/// item made the loop a third busy thread. The loop publishes what it has promised itself
/// (``LoopPromise``):
///
/// - while it is **awake** (from taking the queue until it next prepares to block), it takes the
///   queue again before blocking: no timer, cancellation or re-arm needs a wake-up;
/// - while it is **flushing** — armed to look again within ``LoopCore/flushInterval``, at a
///   monotonic deadline `A` (published only when the queue held nothing unfiled, after the driver
///   was armed) — its next wake-up comes by `A` and begins by taking the queue, before any timer
///   fires or the driver is re-armed: a cancellation needs no wake-up, nor a monotonic timer (new
///   or re-armed earlier) due at or after `A`. One due earlier, or on the wall clock (converted at
///   every arming), wakes it;
/// - otherwise (armed further out, or not at all) the first item that could have waited wakes the
///   loop *and* asks it to flush: the loop then arms its next look within the interval, and keeps
///   doing so while items keep waiting for it. So items that skip the wake-up wait at most one
///   interval — a cancelled timer leaves the store, its memory and `timersPending` that soon,
///   never at some later deadline — and a loop that stops getting them arms nothing extra: an idle
///   loop stays asleep.
///
/// The promise only moves later after the loop took the queue (a fired driver or a stepped wall
/// clock, both of which take it before anything else), so an item left without a wake-up is
/// always filed before it could be late. The ``deferredLimit``-th item in a row left without a
/// wake-up wakes the loop: that bounds what cancelled timers hold within one interval (their
/// closures are released already) and the work the loop finds queued.
package struct LoopWakeRule {
    /// The loop is woken by the item that makes this many queued without a wake-up.
    static let deferredLimit = 1024

    /// What a submission needs of the loop.
    package enum Need: Equatable {
        /// A wake-up, as soon as possible.
        case wake
        /// Nothing: the promise covers it.
        case nothing
        /// Nothing for itself, but the loop should flush: wake it and ask for that.
        case flush
    }

    /// A wake-up was sent and the loop has not taken the queue since.
    private(set) var wakePending = false
    /// What the loop promised about its next look at the queue.
    var promise = LoopPromise.idle
    /// Items queued without a wake-up since the loop last took the queue.
    private(set) var deferred = 0
    /// Some of them came while the loop was armed rather than awake: they wait for the loop's
    /// next look, which it brings forward to ``LoopCore/flushInterval`` from then on.
    private(set) var stragglers = false

    /// What `item` needs of the loop, given `promise`: the rule's table.
    static func need(of item: LoopItem, _ promise: LoopPromise) -> Need {
        switch item {
        case .task, .taskJob, .actorJob:
            return .wake
        case .timer(let timer), .rearmed(let timer):
            // A new timer, or one re-armed to an earlier deadline (already written).
            if promise.isAwake { return .nothing }
            // Wall deadlines are armed through a conversion re-done at every wake-up: keep waking.
            guard !timer.isWall else { return .wake }
            // The submitter still owns the entry, or wrote its deadline before queueing it.
            guard timer.deadlineBeforePublication >= promise.armedDeadline else { return .wake }
            return promise.isFlushing ? .nothing : .flush
        case .cancelled:
            // A cancelled timer that fires first is skipped by its state; it only holds memory
            // and a count until the loop looks, which flushing bounds.
            return promise.isFlushing ? .nothing : .flush
        }
    }

    /// An item was queued: returns whether to send a wake-up now (then one is pending).
    mutating func admit(_ item: LoopItem) -> Bool {
        guard !wakePending else { return false }
        let need = deferred < Self.deferredLimit - 1 ? Self.need(of: item, promise) : .wake
        switch need {
        case .nothing:
            deferred += 1
            if !promise.isAwake { stragglers = true }
            return false
        case .flush:
            stragglers = true
        case .wake:
            break
        }
        wakePending = true
        return true
    }

    /// Something other than an item needs the loop (a shutdown began): whether to send a wake-up.
    mutating func wakeUnlessPending() -> Bool {
        guard !wakePending else { return false }
        wakePending = true
        return true
    }

    /// The loop took the queue after a wake-up or in a batch: it is awake until it publishes a
    /// promise again. Returns whether items had waited without a wake-up while it was armed.
    mutating func loopTookQueue() -> Bool {
        let hadStragglers = stragglers
        wakePending = false
        promise = .awake
        handedOver()
        return hadStragglers
    }

    /// Everything queued went to the loop (any take).
    mutating func handedOver() {
        deferred = 0
        stragglers = false
    }
}

/// What the loop promised about its next look at the queue (see ``LoopWakeRule``).
package struct LoopPromise: Equatable {
    /// `Int64.min` while awake, else the monotonic deadline the driver is armed for
    /// (`Int64.max`: none).
    var armedDeadline: Int64
    /// The armed deadline is a look within ``LoopCore/flushInterval``, not just a timer's.
    var isFlushing: Bool

    /// The loop takes the queue again before it blocks.
    static let awake = LoopPromise(armedDeadline: .min, isFlushing: true)
    /// Nothing armed: the loop may be blocked for good. Not `awake` before the first promise:
    /// the loop's first prepare may come while it is still starting, when it promises nothing
    /// and blocks.
    static let idle = LoopPromise(armedDeadline: .max, isFlushing: false)
    var isAwake: Bool { armedDeadline == .min }
}
