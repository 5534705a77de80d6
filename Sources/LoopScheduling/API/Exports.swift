// `import LoopScheduling` brings in `Scheduling` too, as SwiftNIO's umbrella module `NIO` brings in
// NIOCore: a LoopScheduler's API is written in Scheduling's types (`DateScheduler`, `Disposable`,
// `SchedulerShutdownError`, `TestScheduler` for its tests), and a user who depends on the
// `LoopScheduling` product and writes its one import, as the README shows, can name them all.
@_exported import Scheduling
