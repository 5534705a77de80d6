// FactoryBench on Swift's own executors: the same program as `LoopFactoryDemo bench`, without
// `DefaultExecutorFactory`.
import FactoryBench

@main
struct DefaultExecutorsBench {
    static func main() async throws {
        try await FactoryBench.run()
    }
}
