# The two commands the README promises on a fresh Debian machine with only Swift installed:
#   make run    loopsched's benchmark on the default workloads (release build)
#   make test   warnings-as-errors build, every test, the fixed-seed cross-check, then the
#               concurrency suites again under the thread and the address sanitizer
#               (and the resolution check and the documentation build below)
# and more:
#   make check-resolution  what a package depending on this one resolves, per product and trait
#   make test-allocations  mallocs per operation on the hot paths, each allocation probe built in
#                 release and run, against Tests/AllocationLimits/limits.txt (scripts/check-allocations.py)
#   make examples  every ```swift block of README.md and the DocC articles compiled from a package
#                 outside this one, the program blocks run (scripts/check-examples.sh)
#   make docs     the DocC documentation of every public module, warnings as errors
#   make test-experimental  the trait ExperimentalExecutors (Task.sleep served by the schedulers)
#                 built with warnings as errors in .build-experimental/, and its suites run; then
#                 Examples/LoopFactory, a program on LoopExecutorFactory, built and run (exits 0)
#   make test-stress  the unit and sanitizer suites K times (K=5) beside a busy loop on every core
#                 (SUITES="unit tsan asan experimental" chooses among them)
#   make example  Examples/TimeoutServer (its own package: a Hummingbird 2 and a NIOHTTP1 server) built
#                 in release and loaded with wrk, per-request timeouts on a LoopSchedulerGroup, an
#                 EventLoopScheduler, SwiftNIO's scheduleTask or Task.sleep task groups

SWIFT ?= swift
# SwiftPM passes enabled traits to the compiler as -D flags in hash order: with random hashing, two
# builds with the same --traits may differ in flag order and rebuild everything.
export SWIFT_DETERMINISTIC_HASHING := 1
# Every integration trait and the command-line tool's (see Package.swift): the repository's own
# builds use all of them, always the same set, so the builds share one plan.
TRAIT_NAMES := OpenCombine,ServiceLifecycle,Metrics,Tracing,NIO,CommandLineTool
# The experimental trait's build leaves NIO out: its suites do not touch SwiftNIO, and SwiftNIO is
# the slowest dependency to build (one build fewer in `make test`).
EXPERIMENTAL_TRAIT_NAMES := ExperimentalExecutors,OpenCombine,ServiceLifecycle,Metrics,Tracing,CommandLineTool
TRAITS := --traits $(TRAIT_NAMES)
STRICT := -Xswiftc -warnings-as-errors $(TRAITS)
# Suites that exercise threads: run again under the sanitizers.
CONCURRENCY_SUITES := Races|DriveScopeTests|DriveTests|SchedulingTracingTests|Conformance|LoopSchedulingTests|DisposableTests|TestSchedulerTests|SchedulingCombineTests.LoopOperatorTests|SchedulingServiceLifecycleTests|LoopSchedulingMetricsTests|SchedulingNIOTests
# The suites that run child processes, in a test process of their own: exit tests
# (#expect(processExitsWith:)), whose parent holds a thread of the pool (one per core) while it
# waits for the child, which stalled every other test of the process for as long as the child ran
# on a loaded machine; and LoopProcessLimitTests, whose probes start dozens of loop threads each and
# would starve the timing of the tests beside them. Not run under the sanitizers (they test the
# process, not races; the sanitizer runtimes bring threads and descriptors of their own).
EXIT_SUITES := CrashTests|LoopSetUpFailureTests|LoopProcessLimitTests
# Not under the sanitizers either: the timer store's model tests, single-threaded and CPU-bound (a
# minute and a half of one pool thread under the thread sanitizer, which starved the timing of
# every test beside them; there is no race for it to find).
SANITIZER_SKIP := $(EXIT_SUITES)|DeadlineStoreModelTests
# The sanitizer runs go one test at a time: at a tenth of the speed, a test that keeps a Dispatch
# worker busy (a QueueScheduler action that blocks by design) takes the global queue's width from
# the cooperative pool for long enough to stall every other test of the process.
SANITIZER_FLAGS := --no-parallel
# The experimental trait's suites (Swift's unsettled executor SPIs): built with the usual traits plus
# ExperimentalExecutors, in a build directory of their own so the usual build is not rebuilt.
EXPERIMENTAL_SUITES := LoopSleepExecutorTests|SleepWakeJobTests|LoopExecutorFactoryTests
# The allocation guard's probes (executables linking the malloc interposer, Tests/AllocationProbe;
# Tests/AllocationProbeNIO for SchedulingNIO): each one's counts are checked against its section of
# Tests/AllocationLimits/limits.txt. Built together in one release build, with the usual traits
# (the release build `make run` uses).
ALLOCATION_PROBES := AllocationProbe AllocationProbeNIO
# Each test step keeps its log and, when it fails, prints its failures again as its last lines.
STEP := ./scripts/test-step.sh

.PHONY: all deps build test test-unit test-experimental test-allocations test-tsan test-asan test-stress crosscheck check-resolution docs run bench example clean

all: build

deps:
	@./scripts/ensure-libuv.sh

build: deps
	$(SWIFT) build $(STRICT) --build-tests

test: check-resolution examples test-unit test-experimental crosscheck test-allocations docs test-tsan test-asan

# First, scripts/test-waits.py --check: no test holds a cooperative-pool thread while it waits.
test-unit: deps
	python3 scripts/test-waits.py --check
	$(STEP) unit $(SWIFT) test $(STRICT) --skip '$(EXIT_SUITES)'
	$(STEP) exit $(SWIFT) test $(STRICT) --filter '$(EXIT_SUITES)'

test-experimental: deps
	$(STEP) experimental $(SWIFT) test -Xswiftc -warnings-as-errors --traits $(EXPERIMENTAL_TRAIT_NAMES) \
		--scratch-path .build-experimental --filter '$(EXPERIMENTAL_SUITES)'
	$(STEP) factory-demo sh -c 'cd Examples/LoopFactory && $(SWIFT) build -Xswiftc -warnings-as-errors && timeout 120 ./.build/debug/LoopFactoryDemo'

# Each probe built in release with the usual flags, run, and its
# mallocs per operation compared with its limits: fails naming the path, the count and the limit.
# UPDATE=1 records the counts measured as the limits instead (review the diff).
test-allocations: deps
	SWIFT=$(SWIFT) SWIFT_BUILD_FLAGS="$(STRICT)" $(STEP) allocations ./scripts/check-allocations.py \
		$(if $(UPDATE),--update) $(ALLOCATION_PROBES)

# K runs (default 5) of the unit and sanitizer suites with a busy loop on every core beside them;
# prints "N passed, M failed". Slow: not part of `make test`. SUITES="unit" narrows it; the suite
# "experimental" is make test-experimental (built first, as the others, without the load).
test-stress: deps
	K=$(or $(K),5) SUITES="$(or $(SUITES),unit tsan asan)" MAKE="$(MAKE)" TRAITS="$(TRAITS)" \
		EXPERIMENTAL_TRAITS="--traits $(EXPERIMENTAL_TRAIT_NAMES)" ./scripts/test-stress.sh

crosscheck: deps
	$(STEP) crosscheck $(SWIFT) run $(STRICT) loopsched crosscheck --seed 1 --scripts 200

test-tsan: deps
	$(STEP) tsan $(SWIFT) test $(STRICT) --scratch-path .build-tsan --sanitize=thread $(SANITIZER_FLAGS) --filter '$(CONCURRENCY_SUITES)' --skip '$(SANITIZER_SKIP)'

test-asan: deps
	LSAN_OPTIONS=suppressions=$(CURDIR)/scripts/lsan.supp \
		$(STEP) asan $(SWIFT) test $(STRICT) --scratch-path .build-asan --sanitize=address $(SANITIZER_FLAGS) --filter '$(CONCURRENCY_SUITES)' --skip '$(SANITIZER_SKIP)'

check-resolution:
	SWIFT=$(SWIFT) ./scripts/check-resolution.sh

# The documentation's Swift examples, from a consumer package in .build-examples/ (markers:
# Tests/ExamplesConsumer/README.md). About 3 minutes the first time (it builds the package and the
# integrations again), seconds after.
.PHONY: examples
examples: deps
	SWIFT=$(SWIFT) ./scripts/check-examples.sh

docs: deps
	SWIFT=$(SWIFT) ./scripts/docs.sh

run: deps
	$(SWIFT) run $(STRICT) -c release loopsched bench

bench: run

example: deps
	SWIFT=$(SWIFT) ./scripts/example.sh

clean:
	rm -rf .build .build-tsan .build-asan .build-experimental .build-docs .build-examples Examples/TimeoutServer/.build Examples/TimeoutServer/.build-loops Examples/LoopFactory/.build
