import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// LoopSchedulers at the process's limits (issue 14), each scenario in a fresh `LoopLimitsProbe`
/// process whose first act measures its descriptors and threads — before anything in it made a
/// scheduler, touched libuv or touched Dispatch, which a test runner's process (an exit test's
/// child too) cannot do. The probe creates until a scheduler throws, releases, creates again, for
/// every kind (own thread, caller thread, adopted, a group), checks each error names the failing
/// call and each scenario leaves the process's counts as they were; a crash or a hang (its
/// `alarm`) fails the test with what the probe said.
///
/// Serialized: one probe at a time, since each may run dozens of loop threads, and a child a test
/// waits for must not compete with the other tests' loops for the machine's two cores.
@Suite("LoopScheduler at the process's limits", .serialized)
struct LoopProcessLimitTests {
    @Test(
        "At every descriptor budget, every kind of scheduler throws the failing call, nothing crashes or hangs, and the process's counts come back",
        arguments: Array(0...40)
    )
    func descriptorLimit(spare: Int) async throws {
        let run = try await LimitsProbe.run("descriptors", "\(spare)")
        #expect(run.status == 0, "\(run)")
        // Budgets below one loop's needs must fail, and the probe says which kinds it reached.
        if spare < 6 { #expect(run.output.contains("own thread made 0, threw true"), "\(run)") }
        #expect(run.output.contains("no limit: own thread made 8, threw false"), "\(run)")
    }

    @Test(
        "At the thread limit of an unprivileged user, own-thread loops and groups throw pthread_create, caller-thread and adopted loops work, and nothing hangs",
        .enabled(if: getuid() == 0, "needs root, to switch the probe to an unprivileged user whom RLIMIT_NPROC binds")
    )
    func threadLimit() async throws {
        let run = try await LimitsProbe.run("threads")
        #expect(run.status == 0, "\(run)")
        #expect(run.output.contains("own thread made 2, threw true"), "\(run)")
        #expect(run.output.contains("caller thread ran true"), "\(run)")
    }

    @Test("A thousand schedulers made and released leave the process's descriptors and threads as they were")
    func churn() async throws {
        let run = try await LimitsProbe.run("churn", "1000")
        #expect(run.status == 0, "\(run)")
        #expect(run.output.contains("after 1000 schedulers made and released"), "\(run)")
    }
}

/// Runs `LoopLimitsProbe`, built beside the test bundle, and awaits its exit without holding a
/// thread.
enum LimitsProbe {
    struct Run: CustomStringConvertible {
        var status: Int32
        var signalled: Bool
        var output: String
        var errors: String

        var description: String {
            "probe \(signalled ? "killed by signal" : "exited") \(status)\nstdout: \(output)\nstderr: \(errors)"
        }
    }

    static var executable: URL {
        let tests = URL(fileURLWithPath: (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? "")
        return tests.deletingLastPathComponent().appendingPathComponent("LoopLimitsProbe")
    }

    static func run(_ arguments: String...) async throws -> Run {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        var environment = ProcessInfo.processInfo.environment
        // A crash must end the process at once, not park it in the backtracer.
        environment["SWIFT_BACKTRACE"] = "enable=no"
        process.environment = environment
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try await withCheckedThrowingContinuation { (done: CheckedContinuation<Void, any Error>) in
            process.terminationHandler = { _ in done.resume() }
            do {
                try process.run()
            } catch {
                process.terminationHandler = nil
                done.resume(throwing: error)
            }
        }
        // The probe has exited: these reads find its output and the end of the pipe at once.
        return Run(
            status: process.terminationStatus,
            signalled: process.terminationReason == .uncaughtSignal,
            output: String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self),
            errors: String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        )
    }
}
