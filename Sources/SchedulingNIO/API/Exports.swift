#if NIO
// `import SchedulingNIO` brings in `Scheduling` too, as `import LoopScheduling` does: an
// EventLoopScheduler's API is written in Scheduling's types (`DateScheduler`, `Disposable`,
// `RearmableTimer`, `SchedulerShutdownError`), and a handler that writes the one import can name
// them all. SwiftNIO's own modules stay the user's imports.
@_exported import Scheduling
#endif
