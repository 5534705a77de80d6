import ArgumentParser

struct Crosscheck: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Placeholder")
    @Option var seed: UInt64 = 1
    @Option var scripts = 100
    func run() throws {}
}
