import CLibUV

// The libuv calls of a host program, beside UVHandles.swift and UVHandles+TimerDriver.swift: the
// only other file of the package that calls libuv.

/// A bare `uv_loop_t` owned by a host program, for the adopted-mode fixture in the tests and the
/// benchmarks: the few libuv calls a host makes, kept here with the rest of the unsafe code.
package enum HostUVLoop {
    /// Allocates and initialises a loop; nil if `uv_loop_init` fails.
    package static func make() -> UnsafeMutableRawPointer? {
        let raw = UnsafeMutableRawPointer.allocate(byteCount: uv_loop_size(), alignment: 16)
        do {
            try UVHandles.initLoop(raw.bindMemory(to: uv_loop_t.self, capacity: 1))
        } catch {
            raw.deallocate()
            return nil
        }
        return raw
    }

    /// `uv_run(UV_RUN_DEFAULT)`: until no active handle is left.
    package static func run(_ loop: UnsafeMutableRawPointer) {
        uv_run(loop.assumingMemoryBound(to: uv_loop_t.self), UV_RUN_DEFAULT)
    }

    /// `uv_run(UV_RUN_NOWAIT)`: one iteration that does not block. Returns whether handles are
    /// still active.
    package static func runOnce(_ loop: UnsafeMutableRawPointer) -> Bool {
        uv_run(loop.assumingMemoryBound(to: uv_loop_t.self), UV_RUN_NOWAIT) != 0
    }

    /// `uv_loop_close`, then frees the memory if it returned 0. Returns its result.
    package static func close(_ loop: UnsafeMutableRawPointer) -> Int32 {
        let rc = uv_loop_close(loop.assumingMemoryBound(to: uv_loop_t.self))
        if rc == 0 { loop.deallocate() }
        return rc
    }
}
