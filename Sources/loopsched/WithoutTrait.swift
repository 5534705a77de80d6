#if !CommandLineTool
import Foundation

/// `loopsched` built without the package trait that brings swift-argument-parser in (a plain
/// `swift build` of this package): it only says how to build the real tool. Every other file of
/// this target sits in `#if CommandLineTool`, so that a package depending on this one never
/// resolves swift-argument-parser (Package.swift).
@main
enum LoopschedWithoutTrait {
    static func main() {
        FileHandle.standardError.write(
            Data(
                "loopsched was built without the CommandLineTool trait: use `make run`, or `swift run --traits CommandLineTool loopsched`.\n"
                    .utf8
            )
        )
        exit(64)
    }
}
#endif
