/// Why a ``LoopScheduler`` could not start.
public enum LoopSchedulerError: Error, CustomStringConvertible, Sendable {
    /// A libuv call failed while setting up the loop or its handles.
    case libuv(call: String, code: Int32, message: String)
    /// A system call failed (creating a timerfd or a thread).
    case system(call: String, errno: Int32)

    /// A sentence naming the failed call and its error.
    public var description: String {
        switch self {
        case .libuv(let call, let code, let message): "\(call) failed: \(message) (\(code))"
        case .system(let call, let errno): "\(call) failed: errno \(errno)"
        }
    }
}
