#!/usr/bin/env bash
# Issue 29's comparison of a whole program on LoopExecutorFactory against the same program on
# Swift's own executors: builds Examples/LoopFactory in release and runs FactoryBench's four
# workloads (1 ms Task.sleep lateness and CPU, 100k cancelled 30 s sleeps, 1M Task.yield, 200k
# child tasks; all in plain tasks with no executor preference) in `DefaultExecutorsBench` and in
# `LoopFactoryDemo bench`, alternately, RUNS times each (default 3), one repetition per process;
# prints each figure's median per program and their ratio (factory / default).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
package="$root/Examples/LoopFactory"
runs="${RUNS:-3}"
swift="${SWIFT:-swift}"
${BUILD_PREFIX:-} "$swift" build -c release --package-path "$package" -Xswiftc -warnings-as-errors
bin="$("$swift" build -c release --package-path "$package" -Xswiftc -warnings-as-errors --show-bin-path)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
for run in $(seq 1 "$runs"); do
    FACTORY_BENCH_REPETITIONS=1 "$bin/DefaultExecutorsBench" >"$work/default.$run"
    FACTORY_BENCH_REPETITIONS=1 "$bin/LoopFactoryDemo" bench >"$work/factory.$run"
done
python3 - "$work" "$runs" <<'PY'
import sys, statistics, collections
work, runs = sys.argv[1], int(sys.argv[2])
figures = {"default": collections.defaultdict(list), "factory": collections.defaultdict(list)}
for program in figures:
    for run in range(1, runs + 1):
        for line in open(f"{work}/{program}.{run}"):
            name, value = line.rsplit(" ", 1)
            figures[program][name].append(float(value))
print(f"{'figure':<28}{'default executors':>20}{'LoopExecutorFactory':>22}{'factory/default':>17}")
for name in sorted(figures["default"]):
    d = statistics.median(figures["default"][name])
    f = statistics.median(figures["factory"].get(name, [float("nan")]))
    ratio = f / d if d else float("nan")
    print(f"{name:<28}{d:>20.1f}{f:>22.1f}{ratio:>17.2f}")
early = sum(figures["default"]["early"]) + sum(figures["factory"]["early"])
sys.exit(1 if early else 0)
PY
