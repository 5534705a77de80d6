#if NIO
import NIOCore
@_spi(SchedulerEngine) import Scheduling
import Synchronization

extension EventLoop {
    /// The one ``EventLoopScheduler`` of this event loop, made by the first call on any thread and
    /// shared by every handler of the loop's channels. Cheap on the loop's own thread (no lock);
    /// from another thread, a lock.
    ///
    /// The scheduler lives as long as the loop does: the loop holds it (not the other way round:
    /// the scheduler keeps no reference to its loop that would keep it alive, so a testing loop
    /// that a test releases goes, and its scheduler with it). After the scheduler shut down (the
    /// loop's shutdown, or ``EventLoopScheduler/shutdown()``) this returns the same scheduler,
    /// which refuses new work.
    public var scheduler: EventLoopScheduler {
        EventLoopSchedulers.scheduler(of: self)
    }
}

/// Which scheduler belongs to which event loop: a map keyed by the loop's identity, whose entries
/// hold the loop weakly (checked on every look-up: an identifier can be reused once a loop is
/// gone) and the scheduler strongly; and, on a SwiftNIO event loop's own thread, a per-thread
/// cache that needs no lock. Nothing of SwiftNIO's is called under the map's lock.
enum EventLoopSchedulers {
    private struct Entry {
        weak var loop: (any EventLoop)?
        let scheduler: EventLoopScheduler
    }

    private static let entries = Mutex<[ObjectIdentifier: Entry]>([:])

    static func scheduler(of eventLoop: any EventLoop) -> EventLoopScheduler {
        if let cached = CurrentScheduler.eventLoopSchedulerCache as? EventLoopScheduler,
            cached.driver.eventLoop === eventLoop
        {
            return cached
        }
        let key = ObjectIdentifier(eventLoop)
        // Entries whose loop is gone leave the map here; they are released after unlocking.
        let (scheduler, made, gone) = entries.withLock { entries -> (EventLoopScheduler, Bool, [Entry]) in
            if let entry = entries[key], entry.loop === eventLoop { return (entry.scheduler, false, []) }
            var gone: [Entry] = []
            for (key, entry) in entries where entry.loop == nil {
                gone.append(entry)
                entries[key] = nil
            }
            let scheduler = EventLoopScheduler(on: eventLoop)
            entries[key] = Entry(loop: eventLoop, scheduler: scheduler)
            return (scheduler, true, gone)
        }
        withExtendedLifetime(gone) {}
        if made { scheduler.start() }
        // Only a loop that runs on one thread for its whole life (not a testing loop, whose work
        // may run on any thread of a queue) is cached on that thread.
        if eventLoop.inEventLoop, scheduler.driver.isOnOneThread {
            CurrentScheduler.eventLoopSchedulerCache = scheduler
        }
        return scheduler
    }

    /// Schedulers in the map (for the tests).
    static var count: Int { entries.withLock { $0.count } }
}
#endif
