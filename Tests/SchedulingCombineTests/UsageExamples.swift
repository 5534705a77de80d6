#if OpenCombine
import Dispatch
import Foundation
import LoopScheduling
import LoopSchedulingTestSupport
import OpenCombine
import Scheduling
import SchedulingCombine
import Testing

// A usage example (the earlier README's OpenCombine one), kept as a test of what it
// promises; the README's and the DocC articles' own blocks are compiled from an outside consumer (`make examples`).
// `print` is shadowed to record what the example prints.

private let printed = LockedValue<[String]>([])
private func print(_ items: Any...) {
    printed.withLock { $0.append(items.map { "\($0)" }.joined(separator: " ")) }
}

@Suite("Usage examples: OpenCombine")
struct CombineUsageExamples {
    @Test("debounce on a loop, delay on virtual time")
    func combine() async throws {
        let loop = try LoopScheduler(name: "search")
        let keystrokes = PassthroughSubject<String, Never>()
        let search = keystrokes
            .debounce(for: .milliseconds(300), scheduler: loop.combine)
            .sink { query in print("search:", query) }
        keystrokes.send("sw")
        keystrokes.send("swift")  // one search, for "swift", 300 ms after the last keystroke

        // In tests, the same operators on virtual time: exact, and instant.
        let test = TestScheduler()
        let answer = Just(42).delay(for: .seconds(5), scheduler: test.combine).sink { print("got", $0) }
        test.advance(by: .seconds(5))  // prints "got 42" now
        #expect(printed.withLock { $0.contains("got 42") })
        let searched = await eventually { printed.withLock { $0.contains("search: swift") } }
        #expect(searched)
        #expect(!printed.withLock { $0.contains("search: sw") })
        search.cancel()
        answer.cancel()
        await loop.shutdown()
    }
}
#endif
