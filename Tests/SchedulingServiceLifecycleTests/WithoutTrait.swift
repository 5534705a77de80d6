#if !ServiceLifecycle
import Testing

/// Without the ServiceLifecycle trait the module under test is empty: this suite shows as skipped rather
/// than as a run with nothing in it. `make test` enables every trait.
@Test(.disabled("built without the ServiceLifecycle trait: run `make test` or `swift test --traits ServiceLifecycle`"))
func SchedulingServiceLifecycleTestsNeedItsTrait() {}
#endif
