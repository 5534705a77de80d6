#!/usr/bin/env bash
# The timer rows of issue 16's targets in one session: the C floor (floor-cli), then each given
# loopsched binary, interleaved, one repetition each. Usage, from the repository root:
#
#   swift build -c release -Xswiftc -warnings-as-errors \
#       --traits OpenCombine,ServiceLifecycle,Metrics,Tracing,CommandLineTool --product loopsched
#   (cd Benchmarks && swift build -c release --product floor-cli)
#   Benchmarks/timer-targets.sh .build/release/loopsched [another loopsched ...]
#
# Beside the floor, the cancel-heavy rows also print `loopsched bound` (the first binary's): the
# same workloads with no timer store, the harness's own cost, which no scheduler goes below.
# Default process, as users run it (the last section shows one malloc tunable beside); quiet
# machine wanted (nothing else building).
set -u
floor="$(dirname "$0")/.build/release/floor-cli"
[ -x "$floor" ] || { echo "build floor-cli first (see the header)" >&2; exit 1; }
[ $# -ge 1 ] || { echo "usage: $0 LOOPSCHED [LOOPSCHED ...]" >&2; exit 1; }

for round in 1 2; do
    echo "### timers-fire, lateness, pending-memory (round $round)"
    "$floor" fire 1000000
    "$floor" lateness 100000
    for binary in "$@"; do
        echo "$binary:"
        "$binary" bench --workload timers-fire --workload lateness --workload pending-memory --repetitions 1 2>&1 |
            grep -E "ns/schedule|p50|p99|early|bytes"
    done
done
# Each size of a workload: the floor's FIFO and random runs, then each binary's.
sizes() {
    local floor_workload=$1 workload=$2 lines=$3
    for n in 10000 1000000 10000000; do
        echo "### $workload n=$n"
        "$floor" "$floor_workload" "$n" fifo
        "$floor" "$floor_workload" "$n" random
        echo "no store (loopsched bound):"
        "${binaries[0]}" bound --n "$n" | grep "^$workload "
        for binary in "${binaries[@]}"; do
            echo "$binary:"
            "$binary" bench --workload "$workload" --n "$n" --repetitions 1 2>&1 | grep -A"$lines" "^$workload" | head -$((lines + 1))
        done
    done
}
binaries=("$@")
sizes cancel timers-cancel 1
sizes churn timeouts-churn 2

# Shown beside, never the headline: the same random rows with glibc's malloc asked to back its
# large mappings with transparent huge pages (the tunable, no code change): whether page-table
# walks are part of what a random cancel costs at millions pending.
echo "### beside: GLIBC_TUNABLES=glibc.malloc.hugetlb=1"
for n in 1000000 10000000; do
    echo "### huge pages n=$n"
    GLIBC_TUNABLES=glibc.malloc.hugetlb=1 "$floor" cancel "$n" random
    GLIBC_TUNABLES=glibc.malloc.hugetlb=1 "$floor" churn "$n" random
    echo "${binaries[0]}:"
    GLIBC_TUNABLES=glibc.malloc.hugetlb=1 "${binaries[0]}" bench --workload timers-cancel \
        --workload timeouts-churn --n "$n" --repetitions 1 2>&1 | grep "random"
done
