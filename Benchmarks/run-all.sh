#!/usr/bin/env bash
# Runs the suite one workload at a time (the framework prints its tables only when a run ends, so
# a slow or failing workload cannot lose the others' results). Tables go to results/<workload>.md.
set -u
cd "$(dirname "$0")"
mkdir -p results
for workload in submit-cross submit-onloop timers-fire timers-cancel-fifo timers-cancel-random periodic-drift lateness \
    pending-memory actor-hop-pool actor-hop-own sleep-cancel timeout timeouts-churn-fifo timeouts-churn-random; do
    swift package --disable-sandbox benchmark --filter "^${workload}/.*" --format markdown --no-progress \
        > "results/${workload}.md" 2> "results/${workload}.err" || echo "${workload}: failed (see results/${workload}.err)"
done
