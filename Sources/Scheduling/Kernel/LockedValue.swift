import Foundation

/// A value behind a lock: NIO's `NIOLockedValueBox`, over a pthread mutex (`NSLock`).
///
/// Why not the standard library's `Mutex`: on Linux its contended path hands the lock over through
/// a priority-inheritance futex, which the thread sanitizer cannot see, so every contended lock shows
/// up as a data race under `--sanitize=thread`. A pthread mutex is intercepted by the sanitizer,
/// which keeps the race tests meaningful. Uncontended, the two cost about the same.
///
/// Inlinable, so a caller in another module (the loop engine's submission queue) gets a
/// specialized, inlined critical section rather than a generic call per lock.
package final class LockedValue<Value: ~Copyable> {
    @usableFromInline let lock = NSLock()
    @usableFromInline var value: Value

    @inlinable package init(_ value: consuming Value) {
        self.value = value
    }

    /// Runs `body` with exclusive access to the value. Do not call user code inside.
    @inlinable @inline(__always)
    package func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}

// Every access to `value` happens under `lock`.
extension LockedValue: @unchecked Sendable where Value: Sendable & ~Copyable {}
