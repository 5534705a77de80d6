#if compiler(>=6.3) && ExperimentalExecutors && os(Linux)
// The package trait ExperimentalExecutors (off by default): Swift's unsettled executor SPIs, which
// the next toolchain may not compile. Without the trait nothing of this file is compiled.
@_spi(ExperimentalCustomExecutors) import _Concurrency
import Foundation
import Synchronization

/// A program's main actor and default executor on loops (trait `ExperimentalExecutors`,
/// <doc:ExperimentalExecutors>): every `Task {}`, every `Task.sleep` and every main-actor job of
/// the program runs on a loop, with no Dispatch thread in between.
///
/// A program opts in by naming the factory in its `@main` type (or at top level), and on Swift
/// 6.3 by compiling its executable with `-Xfrontend -disable-availability-checking`, without which
/// the compiler ignores the name silently. ``isInEffect`` says whether it took effect:
///
/// ```swift
/// import LoopScheduling
///
/// @main struct Server {
///     typealias DefaultExecutorFactory = LoopExecutorFactory
///
///     static func main() async throws {
///         precondition(LoopExecutorFactory.isInEffect, "build with -Xfrontend -disable-availability-checking")
///         try await Task.sleep(for: .milliseconds(10))   // a timer of a default loop
///     }
/// }
/// ```
///
/// - The main actor runs on a loop on the main thread (``mainLoop``). It drains Dispatch's main
///   queue too, so `DispatchQueue.main` and `Schedulers.main` work as under Dispatch.
/// - Tasks with no executor preference run on a group of loops (``defaultLoops``), one per core
///   unless the environment variable `LOOP_EXECUTOR_FACTORY_LOOPS` names a count (1 to 1,024)
///   when the program starts. A job enqueued on one of these loops' threads stays on that loop;
///   one from another thread goes to the first loop with no task or job waiting in its queue from
///   other threads, and the loops take turns only when every queue has work waiting. Inside such
///   a task `Schedulers.current` is the loop that runs it.
/// - Every `Task.sleep` outside a preferred executor is one of these loops' timers: never early,
///   with the sleep's tolerance as its leeway, counted in the loop's statistics. A cancelled one
///   stays pending until its deadline, as on any loop with the trait.
/// - The program exits when `main` returns, as under Dispatch; the loops are not shut down.
///   Shutting ``mainLoop`` down ends the program too (Swift exits when its main executor stops):
///   leave it running. A default loop that was shut down takes no more work while another is
///   open.
///
/// A task that prefers one of ``defaultLoops`` (`Task(executorPreference:)`) runs on it, but
/// every switch of executor then costs one more pass through the loop's queue: give such work a
/// loop of its own.
@available(macOS 26.4, iOS 26.4, watchOS 26.4, tvOS 26.4, visionOS 26.4, *)
public enum LoopExecutorFactory {
    /// Made by the runtime's first request, on the main thread, before `main` runs.
    fileprivate static let main = LoopMainExecutor(drainsDispatchMainQueue: true)
    fileprivate static let pool = LoopDefaultExecutor(count: defaultLoopCount)
    private static let requested = Atomic<Bool>(false)

    /// Whether the runtime took the program's executors from this factory: false when the
    /// program does not name it, or was compiled without the flag that makes Swift 6.3 read the
    /// name. Check it at the start of `main`.
    public static var isInEffect: Bool { requested.load(ordering: .acquiring) }

    /// The loop that runs the main actor on the main thread; nil unless ``isInEffect``.
    public static var mainLoop: LoopScheduler? { isInEffect ? main.loop : nil }

    /// The loops that run tasks with no executor preference; empty unless ``isInEffect``.
    public static var defaultLoops: [LoopScheduler] { isInEffect ? pool.loops : [] }

    /// `LOOP_EXECUTOR_FACTORY_LOOPS` when it is a number from 1 to 1,024, else the active cores.
    static var defaultLoopCount: Int {
        if let value = ProcessInfo.processInfo.environment["LOOP_EXECUTOR_FACTORY_LOOPS"], let count = Int(value),
            (1...1024).contains(count)
        {
            return count
        }
        return max(1, ProcessInfo.processInfo.activeProcessorCount)
    }

    static func noteRequested() {
        requested.store(true, ordering: .releasing)
    }
}

/// The factory itself, as Swift's runtime reads it (`ExecutorFactory`, an SPI of Swift 6.3 that
/// may change with the next toolchain).
@_spi(ExperimentalCustomExecutors)
@available(macOS 26.4, iOS 26.4, watchOS 26.4, tvOS 26.4, visionOS 26.4, *)
extension LoopExecutorFactory: ExecutorFactory {
    /// The main loop's executor: runs the main actor on the main thread.
    public static var mainExecutor: any MainExecutor {
        noteRequested()
        return main
    }

    /// The default loops' executor: runs tasks with no executor preference and their sleeps.
    public static var defaultExecutor: any TaskExecutor {
        noteRequested()
        return pool
    }
}
#endif
