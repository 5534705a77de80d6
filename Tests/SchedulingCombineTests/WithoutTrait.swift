#if !OpenCombine
import Testing

/// Without the OpenCombine trait the module under test is empty: this suite shows as skipped rather
/// than as a run with nothing in it. `make test` enables every trait.
@Test(.disabled("built without the OpenCombine trait: run `make test` or `swift test --traits OpenCombine`"))
func SchedulingCombineTestsNeedItsTrait() {}
#endif
