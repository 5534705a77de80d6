#!/usr/bin/env bash
# The trait ExperimentalExecutors measured against its absence in one command (issue 29): builds
# loopsched in release twice — without the trait (.build/) and with it
# (.build-experimental-release/) — then runs `loopsched bench` on the four Swift-concurrency
# workloads (task-sleep, task-sleep-cancel, yield, spawn), alternating the two builds (without,
# with, without, …), RUNS runs each of one repetition, and prints per workload and system the
# medians of each build's runs side by side.
#
# Every run is a process of its own: the cancelled Task.sleeps task-sleep-cancel leaves queued
# (30 s deadlines) end with it, so no run disturbs the next.
#
# Fails (non-zero) if a build fails or if any run reported a self-check failure (an early sleep,
# a Task.sleep not served by the loop with the trait, a child task that did not run, …); the
# failures are printed after the table.
#
# Usage: scripts/bench-executors.sh [loopsched bench options…], e.g. `--full` (task-sleep at 20k
# sleeps) or `--n 500`. Environment: SWIFT (swift), RUNS (3), WORKLOADS ("task-sleep
# task-sleep-cancel yield spawn"), BUILD_PREFIX (prefix of the two build commands, e.g.
# "nice -n 10"), KEEP (a directory to keep the runs' JSON in).
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
swift="${SWIFT:-swift}"
runs="${RUNS:-3}"
read -r -a workloads <<<"${WORKLOADS:-task-sleep task-sleep-cancel yield spawn}"
read -r -a build_prefix <<<"${BUILD_PREFIX:-}"
# SwiftPM passes traits to the compiler in hash order: deterministic hashing keeps a rebuild with
# the same traits from recompiling everything (as the Makefile does).
export SWIFT_DETERMINISTIC_HASHING=1

without=(-c release --traits CommandLineTool --product loopsched)
with=(-c release --traits CommandLineTool,ExperimentalExecutors --scratch-path .build-experimental-release
    --product loopsched)

echo "building loopsched without the trait: swift build ${without[*]}" >&2
"${build_prefix[@]}" "$swift" build "${without[@]}" >&2
echo "building loopsched with the trait: swift build ${with[*]}" >&2
"${build_prefix[@]}" "$swift" build "${with[@]}" >&2
bin_without="$("$swift" build "${without[@]}" --show-bin-path)/loopsched"
bin_with="$("$swift" build "${with[@]}" --show-bin-path)/loopsched"

out="${KEEP:-$(mktemp -d "${TMPDIR:-/tmp}/bench-executors.XXXXXX")}"
mkdir -p "$out"
selection=()
for workload in "${workloads[@]}"; do selection+=(--workload "$workload"); done

status=0
for run in $(seq 1 "$runs"); do
    for build in without with; do
        bin="bin_$build"
        echo "run $run of $runs, $build the trait" >&2
        # A run with a failed self-check exits 1 after printing its objects (failures included).
        if ! "${!bin}" bench "${selection[@]}" --repetitions 1 --json "$@" >"$out/$build-$run.json"; then
            status=1
        fi
    done
done

python3 - "$out" "$runs" <<'EOF' || status=1
import json, statistics, sys
from pathlib import Path

out, runs = Path(sys.argv[1]), int(sys.argv[2])
figures = {}   # (workload, system) -> build -> metric -> [values]
order = []     # (workload, system) as first seen
metrics = {}   # workload -> metric names, in the report's order
sizes = {}     # workload -> n
failures = []
for build in ("without", "with"):
    for run in range(1, runs + 1):
        path = out / f"{build}-{run}.json"
        for line in path.read_text().splitlines() if path.exists() else []:
            if not line.startswith("{"):
                continue
            obj = json.loads(line)
            key = (obj["workload"], obj["scheduler"])
            if key not in figures:
                figures[key] = {}
                order.append(key)
            metrics.setdefault(obj["workload"], list(obj["medians"]))
            for name in obj["medians"]:
                if name not in metrics[obj["workload"]]:
                    metrics[obj["workload"]].append(name)
            sizes.setdefault(obj["workload"], obj["n"])
            for name, value in obj["medians"].items():
                if value is not None:
                    figures[key].setdefault(build, {}).setdefault(name, []).append(value)
            failures += [f"{build} the trait, run {run}: {key[0]} on {key[1]}: {f}" for f in obj["failures"]]

def fmt(values):
    if not values:
        return "–"
    value = statistics.median(values)
    if value == 0:
        return "0"
    if abs(value) >= 100:
        return f"{value:.0f}"
    if abs(value) >= 10:
        return f"{value:.1f}"
    return f"{value:.3g}"

print(f"loopsched bench: medians of {runs} run(s) per build, the builds alternating; "
      "\"without\" / \"with\" the trait ExperimentalExecutors")
for workload in dict.fromkeys(w for w, _ in order):
    names = metrics[workload]
    heading = f"{workload} (n={sizes[workload]})"
    widths = [max(26, len(heading)), 7] + [max(12, len(name)) for name in names]
    def row(cells):
        return "  ".join(c.ljust(w) if i < 2 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths)))
    print()
    print(row([heading, "trait"] + names))
    print(row(["-" * w for w in widths]))
    for key in (k for k in order if k[0] == workload):
        for build in ("without", "with"):
            values = figures[key].get(build, {})
            print(row([key[1] if build == "without" else "", build] + [fmt(values.get(n, [])) for n in names]))
if failures:
    print("\nself-check failures:\n" + "\n".join(failures), file=sys.stderr)
    sys.exit(1)
EOF
[[ -n "${KEEP:-}" ]] || rm -rf "$out"
exit "$status"
