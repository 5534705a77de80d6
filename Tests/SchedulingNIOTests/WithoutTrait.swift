#if !NIO
import Testing

/// Without the NIO trait the module under test is empty: this suite shows as skipped rather than
/// as a run with nothing in it. `make test` enables every trait.
@Test(.disabled("built without the NIO trait: run `make test` or `swift test --traits NIO`"))
func SchedulingNIOTestsNeedItsTrait() {}
#endif
