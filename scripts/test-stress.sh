#!/usr/bin/env bash
# make test-stress: K runs (default 5) of each suite with a busy loop on every core beside them, so
# a test that holds a pool thread, or asserts how fast this machine is, shows up as a failure.
#   K=5 SUITES="unit tsan asan experimental" scripts/test-stress.sh
# A suite is a make target, test-<suite>: unit, tsan, asan, experimental (the trait
# ExperimentalExecutors' suites and Examples/LoopFactory, `make test-experimental`).
# Prints one line per run and a last line exactly "N passed, M failed"; exits 1 if any failed.
# Not part of `make test`: it is slow. Logs go to .build/stress/. The Makefile passes TRAITS (the
# usual --traits flag) and EXPERIMENTAL_TRAITS (the same with ExperimentalExecutors).
set -u
K="${K:-5}"
SUITES="${SUITES:-unit tsan asan}"
MAKE="${MAKE:-make}"
LOGS=".build/stress"
mkdir -p "$LOGS"

spinners=()
stop_spinners() {
    for pid in "${spinners[@]}"; do kill "$pid" 2>/dev/null; done
    for pid in "${spinners[@]}"; do wait "$pid" 2>/dev/null; done
    spinners=()
}
trap 'stop_spinners; exit 130' INT TERM
trap 'stop_spinners' EXIT

# Build first, without the load, so the runs measure the tests and not the compiler.
for suite in $SUITES; do
    case "$suite" in
        unit) swift build -Xswiftc -warnings-as-errors ${TRAITS:-} --build-tests >/dev/null || exit 1 ;;
        tsan) swift build -Xswiftc -warnings-as-errors ${TRAITS:-} --build-tests --scratch-path .build-tsan --sanitize=thread >/dev/null || exit 1 ;;
        asan) swift build -Xswiftc -warnings-as-errors ${TRAITS:-} --build-tests --scratch-path .build-asan --sanitize=address >/dev/null || exit 1 ;;
        experimental)
            swift build -Xswiftc -warnings-as-errors ${EXPERIMENTAL_TRAITS:---traits ExperimentalExecutors} --build-tests \
                --scratch-path .build-experimental >/dev/null || exit 1
            (cd Examples/LoopFactory && swift build -Xswiftc -warnings-as-errors >/dev/null) || exit 1 ;;
        *) echo "unknown suite: $suite (unit, tsan, asan, experimental)" >&2; exit 2 ;;
    esac
done

for _ in $(seq "$(nproc)"); do
    (while :; do :; done) &
    spinners+=("$!")
done

passed=0
failed=0
for run in $(seq "$K"); do
    for suite in $SUITES; do
        log="$LOGS/$suite-$run.log"
        start=$(date +%s)
        if "$MAKE" --no-print-directory "test-$suite" >"$log" 2>&1; then
            passed=$((passed + 1))
            echo "run $run $suite: passed ($(($(date +%s) - start)) s)"
        else
            failed=$((failed + 1))
            echo "run $run $suite: FAILED ($(($(date +%s) - start)) s), see $log"
        fi
    done
done

stop_spinners
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
