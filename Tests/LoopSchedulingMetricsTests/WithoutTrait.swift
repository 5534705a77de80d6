#if !Metrics
import Testing

/// Without the Metrics trait the module under test is empty: this suite shows as skipped rather
/// than as a run with nothing in it. `make test` enables every trait.
@Test(.disabled("built without the Metrics trait: run `make test` or `swift test --traits Metrics`"))
func LoopSchedulingMetricsTestsNeedItsTrait() {}
#endif
