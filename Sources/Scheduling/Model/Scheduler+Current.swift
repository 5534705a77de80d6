extension Scheduler {
    /// Whether the calling code runs inside an action of this scheduler, that is whether
    /// ``Schedulers/current`` is this scheduler.
    ///
    /// It says nothing about threads: a ``QueueScheduler``'s queue may run on different threads,
    /// and code on a loop thread outside any action (a host's own libuv callback, say) is not
    /// "current". Use it for assertions and fast paths, not as a lock.
    public var isCurrent: Bool {
        Schedulers.current === self
    }

    /// Runs `body` now, on the calling thread, with ``Schedulers/current`` set to this scheduler,
    /// and restores the previous value afterwards (also when `body` throws).
    ///
    /// It does not move `body` to the scheduler's thread or queue: it is for code that already runs
    /// in the scheduler's context and wants the contract to say so (RACScheduler's
    /// `performAsCurrentScheduler:`).
    @discardableResult
    public func performAsCurrent<Result, Failure: Error>(
        _ body: () throws(Failure) -> Result
    ) throws(Failure) -> Result {
        try CurrentScheduler.withCurrent(self, body)
    }
}
