#if ServiceLifecycle
import Foundation
import LoopScheduling
import Logging
import Scheduling
import SchedulingServiceLifecycle
import ServiceLifecycle
import Testing

// A usage example (the earlier README's service-lifecycle one), kept as a test of what it
// promises; the README's and the DocC articles' own blocks are compiled from an outside consumer (`make examples`).
// `logger` is quiet here; `TimeoutServer` stands for the reader's own service.

private let printed = LockedValue<[String]>([])
private func print(_ items: Any...) {
    printed.withLock { $0.append(items.map { "\($0)" }.joined(separator: " ")) }
}

/// A service that arms a timeout on the loops, serves one request before it fires, and returns.
private struct TimeoutServer: Service {
    let timeouts: LoopSchedulerGroup

    func run() async throws {
        let loop = timeouts.next()
        let timeout = loop.schedule(after: .seconds(30)) { print("timed out") }
        await withCheckedContinuation { (served: CheckedContinuation<Void, Never>) in
            loop.schedule(after: .milliseconds(5)) {
                timeout.dispose()
                print("served")
                served.resume()
            }
        }
    }
}

@Suite("Usage examples: service lifecycle")
struct ServiceUsageExamples {
    @Test("A LoopSchedulerGroup in a ServiceGroup")
    func serviceGroup() async throws {
        let logger = quietLogger
        let loops = try LoopSchedulerGroup(count: 2, name: "io")
        let server = TimeoutServer(timeouts: loops)  // your service, arming its timeouts on the loops
        let services = ServiceGroup(
            configuration: ServiceGroupConfiguration(
                services: [
                    .init(service: loops),  // listed first: a group stops services in reverse order
                    .init(service: server, successTerminationBehavior: .gracefullyShutdownGroup),
                ],
                logger: logger
            )
        )
        try await services.run()  // once `server` returns (or on a signal): the loops shut down last
        #expect(printed.withLock { $0 } == ["served"])
        for loop in loops.schedulers { #expect(refusesWork(loop)) }
    }
}
#endif
