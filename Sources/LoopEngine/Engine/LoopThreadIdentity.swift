import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Which thread runs a loop: the one fact every part of the engine checks its confinement against.
package final class LoopThreadIdentity: Sendable {
    /// The scheduler's name, for the messages.
    let name: String
    /// The pthread running the loop, as a number; 0 until an own thread starts (scheduling before
    /// that goes through the remote queue, locked) and after the loop closed.
    private let thread = Atomic<UInt>(0)
    /// Asked while no thread is recorded: a loop whose thread varies (a SwiftNIO testing loop runs
    /// on a Dispatch queue's threads), or one whose thread the engine does not know yet.
    private let isCurrentCheck: (@Sendable () -> Bool)?

    init(name: String, isCurrent: (@Sendable () -> Bool)? = nil) {
        self.name = name
        self.isCurrentCheck = isCurrent
    }

    /// Whether the calling thread is the loop thread.
    @inline(__always)
    var isCurrent: Bool {
        let thread = thread.load(ordering: .relaxed)
        if thread != 0 { return thread == Self.callingThread }
        return isCurrentCheck?() ?? false
    }

    /// Records the calling thread as the loop thread.
    func becomeCurrent() {
        thread.store(Self.callingThread, ordering: .relaxed)
    }

    /// After the last close callback: no thread is the loop thread any more (glibc reuses thread
    /// descriptors, and another thread must not pass for the loop's).
    func forget() {
        thread.store(0, ordering: .relaxed)
    }

    /// Debug builds stop the program, naming the scheduler and `function`, off the loop thread.
    @inline(__always)
    func assertCurrent(_ type: StaticString = "LoopCore", _ function: StaticString = #function) {
        #if DEBUG
        if !isCurrent {
            fatalError("\(type).\(function): loop-confined state of '\(name)' reached off its loop thread")
        }
        #endif
    }

    private static var callingThread: UInt { UInt(bitPattern: Int(bitPattern: pthread_self())) }
}
