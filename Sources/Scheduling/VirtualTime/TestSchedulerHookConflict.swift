/// Thrown by ``TestScheduler/drive(_:)`` when another library's hook holds the Swift runtime's
/// global-enqueue hook slot, through which `drive` takes in the tasks its body starts.
///
/// The runtime has one such hook for the whole process. The first `drive` of the process puts its
/// own there, passing on what it does not take to the hook that was there before (SwiftNIO's
/// global-executor takeover, for one). A hook installed after it replaces it: swift-concurrency-
/// extras' `withMainSerialExecutor` while its body runs, a SwiftNIO takeover started later. Then
/// `drive` could not take in a plain `Task {}` — it would run on the global pool, out of virtual
/// time — so it throws this error before running its body, naming the hook that is there.
///
/// When that hook is gone again — the slot is empty, as `withMainSerialExecutor` leaves it when it
/// ends, or holds the hook `drive` had chained to — the next `drive` installs its own again and
/// works as before. So: call `drive` outside `withMainSerialExecutor`, and start a global-executor
/// takeover before the first `drive`.
public struct TestSchedulerHookConflict: Error, Sendable, Equatable, CustomStringConvertible {
    /// The address of the function in the runtime's hook slot.
    public let hookAddress: UInt
    /// Its symbol and the image it lives in, where the dynamic loader can name it (a function a
    /// library exports); nil where it cannot.
    public let hookSymbol: String?

    /// Makes the error; ``TestScheduler/drive(_:)`` is what throws it.
    public init(hookAddress: UInt, hookSymbol: String?) {
        self.hookAddress = hookAddress
        self.hookSymbol = hookSymbol
    }

    /// Which hook is there, and what to do about it.
    public var description: String {
        let address = "0x" + String(hookAddress, radix: 16)
        let hook = hookSymbol.map { "\($0) (\(address))" } ?? "the function at \(address)"
        return "TestSchedulerHookConflict: another global-enqueue hook holds the Swift runtime's slot: \(hook). "
            + "drive takes in the tasks its body starts through that slot, so it cannot run the body on "
            + "virtual time (is drive called inside withMainSerialExecutor, or was a global-executor takeover "
            + "started after the first drive?)"
    }
}
