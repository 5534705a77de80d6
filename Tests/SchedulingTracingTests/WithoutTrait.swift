#if !Tracing
import Testing

/// Without the Tracing trait the module under test is empty: this suite shows as skipped rather
/// than as a run with nothing in it. `make test` enables every trait.
@Test(.disabled("built without the Tracing trait: run `make test` or `swift test --traits Tracing`"))
func SchedulingTracingTestsNeedItsTrait() {}
#endif
