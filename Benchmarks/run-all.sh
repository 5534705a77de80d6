#!/usr/bin/env bash
# Runs the suite one workload at a time (the framework prints its tables only when a run ends, so
# a slow or failing workload cannot lose the others' results). Tables go to results/<workload>.md.
# With BENCHMARKS_EXPERIMENTAL_EXECUTORS=1 (Package.swift: the root package's trait
# ExperimentalExecutors), the build is in .build-experimental/, so that it and the usual one do not
# rebuild each other, and the tables go to results-experimental/.
set -u
cd "$(dirname "$0")"
scratch=()
results=results
if [ -n "${BENCHMARKS_EXPERIMENTAL_EXECUTORS:-}" ] && [ "${BENCHMARKS_EXPERIMENTAL_EXECUTORS}" != 0 ]; then
    scratch=(--scratch-path .build-experimental)
    results=results-experimental
fi
mkdir -p "$results"
for workload in submit-cross submit-onloop timers-fire timers-cancel-fifo timers-cancel-random periodic-drift lateness \
    pending-memory actor-hop-pool actor-hop-own sleep-cancel timeout timeouts-churn-fifo timeouts-churn-random \
    task-sleep task-sleep-cancel yield spawn nio-cancel-fifo nio-cancel-random nio-rearm-fifo nio-rearm-random \
    nio-fire nio-memory; do
    swift package --disable-sandbox "${scratch[@]}" benchmark --filter "^${workload}/.*" --format markdown --no-progress \
        > "$results/${workload}.md" 2> "$results/${workload}.err" || echo "${workload}: failed (see $results/${workload}.err)"
done
