#!/usr/bin/env python3
"""Judge a timing drift between two commits, or measure one commit's run-to-run swing.

Builds `loopsched` in release for each commit (`git archive` of the commit into
.build-drift/<hash>/src, then `swift build -c release --traits CommandLineTool --product loopsched`
there; a commit's build is kept and reused), runs `loopsched bench --json` with the chosen
workloads alternately, one process after the other (A, B, A, B, ...), RUNS times each, and prints
for every metric each build's median, spread (min-max, interquartile range, and the swing:
(max - min) / median) and, for two commits, the ratio of medians B/A and a two-sided Mann-Whitney
U rank test's p-value (exact without ties and for up to 40 runs in all, else the normal
approximation with tie and continuity corrections). Each process's figure is its own median over
its `--repetitions` (loopsched's default is 3; pass `-- --repetitions 1` for one measurement per
process). With one commit it runs only that build: its swing between runs.

Usage:
  scripts/drift.py [--runs R] [--workload W]... [--scheduler S]... [--metric M]...
                   REV_A [REV_B] [-- LOOPSCHED_BENCH_ARGUMENT...]
  scripts/drift.py --replay RECORD.jsonl [--scheduler S]... [--metric M]...

  REV_A, REV_B      commits (anything `git rev-parse` takes: a hash, HEAD, a branch)
  --runs R          processes per build (default 5; 10 or more to judge a tail percentile)
  --workload W      passed on as `--workload W` (repeatable; default: every workload, make run's set)
  --scheduler S     report only this system (as in --json's "scheduler"; repeatable)
  --metric M        report only this metric (as in --json's "medians", e.g. "p99 µs"; repeatable)
  after --          passed on to every `loopsched bench` (e.g. --repetitions 1 --n 1000000)
  --replay RECORD   print the report again from a record of earlier runs (below), running nothing

Example (QueueScheduler's lateness p99 before and after the re-arm work):
  scripts/drift.py --runs 10 --workload lateness --scheduler QueueScheduler c4d6d82 7803060 -- --repetitions 1

Every run's JSON, with the load average before and after it, goes to a record in
.build-drift/runs/ (its path is printed). SWIFT chooses the toolchain's
`swift` (default: swift). Exits 1 when a build or a run fails (a loopsched self-check failure is a
failed run), 2 on bad arguments.
"""

import argparse
import datetime
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
from functools import lru_cache
from pathlib import Path


def fail(message):
    print(f"drift: {message}", file=sys.stderr)
    sys.exit(1)


def git(root, *arguments):
    return subprocess.run(["git", "-C", str(root), *arguments], check=True, capture_output=True, text=True).stdout


def build(root, cache, revision, environment):
    """The path of `loopsched` built in release from `revision`'s tree; built once per commit."""
    try:
        commit = git(root, "rev-parse", "--verify", f"{revision}^{{commit}}").strip()
    except subprocess.CalledProcessError:
        fail(f"{revision} is not a commit")
    directory = cache / commit
    marker = directory / "loopsched-path"
    if marker.exists() and Path(marker.read_text().strip()).exists():
        return commit, marker.read_text().strip()
    source = directory / "src"
    if source.exists():
        shutil.rmtree(source)
    source.mkdir(parents=True)
    archive = subprocess.Popen(["git", "-C", str(root), "archive", commit], stdout=subprocess.PIPE)
    subprocess.run(["tar", "-x", "-C", str(source)], stdin=archive.stdout, check=True)
    if archive.wait() != 0:
        fail(f"git archive {commit} failed")
    # The same dependency versions for both builds, when the caller's tree has resolved them.
    if (root / "Package.resolved").exists():
        shutil.copy(root / "Package.resolved", source / "Package.resolved")
    swift = os.environ.get("SWIFT", "swift")
    command = [swift, "build", "-c", "release", "--traits", "CommandLineTool", "--product", "loopsched"]
    print(f"drift: building {commit[:10]} ({' '.join(command)}), log in {directory / 'build.log'}", file=sys.stderr)
    with open(directory / "build.log", "w") as log:
        if subprocess.run(command, cwd=source, stdout=log, stderr=subprocess.STDOUT, env=environment).returncode:
            tail = (directory / "build.log").read_text().splitlines()[-20:]
            fail(f"the build of {commit[:10]} failed:\n" + "\n".join(tail))
    binary = subprocess.run(
        [*command, "--show-bin-path"], cwd=source, capture_output=True, text=True, env=environment
    ).stdout.strip()
    path = str(Path(binary) / "loopsched")
    if not Path(path).exists():
        fail(f"no loopsched at {path} after building {commit[:10]}")
    marker.write_text(path + "\n")
    return commit, path


def run(binary, arguments, environment):
    """One `loopsched bench --json` process: {(workload, scheduler, metric): value} and its objects."""
    result = subprocess.run([binary, "bench", "--json", *arguments], capture_output=True, text=True, env=environment)
    if result.returncode:
        fail(f"{binary} bench exited {result.returncode}:\n" + "\n".join(result.stderr.splitlines()[-20:]))
    objects = [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]
    figures = {}
    for item in objects:
        if item["failures"]:
            fail(f"self-check failed: {item['workload']} on {item['scheduler']}: {item['failures']}")
        for metric, value in item["medians"].items():
            if value is not None:
                figures[(item["workload"], item["scheduler"], metric)] = value
    return figures, objects


@lru_cache(maxsize=None)
def u_counts(m, n):
    """How many orderings of m values of A and n of B give each U (pairs with A above B), no ties."""
    if m == 0 or n == 0:
        return (1,)
    counts = [0] * (m * n + 1)
    for u, count in enumerate(u_counts(m - 1, n)):  # the largest value is A's: it is above all n
        counts[u + n] += count
    for u, count in enumerate(u_counts(m, n - 1)):  # the largest value is B's
        counts[u] += count
    return tuple(counts)


def mann_whitney(a, b):
    """Two-sided p-value of the Mann-Whitney U test of a against b, and how it was computed."""
    m, n = len(a), len(b)
    pooled = sorted([(value, 0) for value in a] + [(value, 1) for value in b])
    ranks, ties, i = [0.0] * len(pooled), [], 0
    while i < len(pooled):
        j = i
        while j + 1 < len(pooled) and pooled[j + 1][0] == pooled[i][0]:
            j += 1
        for k in range(i, j + 1):
            ranks[k] = (i + j) / 2 + 1  # tied values share their mean rank
        ties.append(j - i + 1)
        i = j + 1
    u = sum(rank for rank, (_, group) in zip(ranks, pooled) if group == 0) - m * (m + 1) / 2
    if max(ties) == 1 and m + n <= 40:
        counts = u_counts(m, n)
        total = math.comb(m + n, m)
        lower, upper = sum(counts[: int(u) + 1]) / total, sum(counts[int(u) :]) / total
        return min(1.0, 2 * min(lower, upper)), "exact"
    total = m + n
    variance = m * n / 12 * ((total + 1) - sum(t**3 - t for t in ties) / (total * (total - 1)))
    if variance <= 0:
        return 1.0, "normal"  # every value equal
    z = max(0.0, abs(u - m * n / 2) - 0.5) / math.sqrt(variance)
    return math.erfc(z / math.sqrt(2)), "normal"


def spread(values):
    """Median, min-max, interquartile range and swing ((max - min) / median, %) of one build's runs."""
    median = statistics.median(values)
    low, high = min(values), max(values)
    q1, _, q3 = statistics.quantiles(values, n=4, method="inclusive") if len(values) > 1 else (low, low, high)
    swing = f"{100 * (high - low) / median:.0f}%" if median else "–"
    return [figure(median), f"{figure(low)}–{figure(high)}", f"{figure(q1)}–{figure(q3)}", swing]


def figure(value):
    if value == 0:
        return "0"
    if abs(value) >= 100:
        return f"{value:.0f}"
    return f"{value:.3g}"


def table(header, rows):
    widths = [max(len(str(row[i])) for row in [header, *rows]) for i in range(len(header))]
    lines = []
    for row in [header, ["-" * width for width in widths], *rows]:
        cells = [str(cell).ljust(w) if i < 3 else str(cell).rjust(w) for i, (cell, w) in enumerate(zip(row, widths))]
        lines.append("  ".join(cells).rstrip())
    return "\n".join(lines)


def load():
    return " ".join(Path("/proc/loadavg").read_text().split()[:3]) if Path("/proc/loadavg").exists() else "?"


def measure(options, root, passed):
    """Builds the commits and runs them alternated; returns the record's path."""
    cache = root / ".build-drift"
    environment = dict(os.environ)
    environment.setdefault("SWIFT_DETERMINISTIC_HASHING", "1")  # as the Makefile's builds and runs
    builds = [build(root, cache, revision, environment) for revision in options.revisions]
    arguments = [item for workload in options.workload for item in ("--workload", workload)] + passed
    (cache / "runs").mkdir(parents=True, exist_ok=True)
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    record = cache / "runs" / f"{stamp}-{'-'.join(commit[:7] for commit, _ in builds)}.jsonl"
    with open(record, "w") as log:
        log.write(json.dumps({"commits": [commit for commit, _ in builds], "arguments": arguments}) + "\n")
        for index in range(options.runs):
            for build_index, (commit, binary) in enumerate(builds):
                print(f"drift: run {index + 1}/{options.runs} of {'AB'[build_index]} {commit[:7]}", file=sys.stderr)
                before = load()
                _, objects = run(binary, arguments, environment)
                entry = {"commit": commit, "run": index + 1, "load before": before, "load after": load()}
                log.write(json.dumps({**entry, "objects": objects}) + "\n")
                log.flush()
    return record


def report(record, options, root):
    """Prints the comparison (or one build's swing) from a record of runs."""
    lines = [json.loads(line) for line in open(record)]
    header = lines[0] if "commits" in lines[0] else {"commits": [], "arguments": None}
    entries = [line for line in lines if "objects" in line]
    commits = header["commits"] or list(dict.fromkeys(entry["commit"] for entry in entries))
    samples = [{} for _ in commits]
    for entry in entries:
        for item in entry["objects"]:
            for metric, value in item["medians"].items():
                if value is not None:
                    key = (item["workload"], item["scheduler"], metric)
                    samples[commits.index(entry["commit"])].setdefault(key, []).append(value)
    keys = [
        key
        for key in samples[0]
        if (not options.scheduler or key[1] in options.scheduler) and (not options.metric or key[2] in options.metric)
    ]
    if not keys:
        fail("no figure matches --scheduler/--metric")
    labels = [f"{name} {commit[:7]}" for name, commit in zip("AB", commits)]
    runs = len(entries) // len(commits)
    arguments = " ".join(header["arguments"]) if header["arguments"] is not None else "…"
    loads = [float(entry[moment].split()[0]) for entry in entries for moment in ("load before", "load after")]
    print(f"loopsched bench --json {arguments}".rstrip() + f": {runs} run(s) per build, alternated "
          f"({', '.join(labels)}), one process each")
    print(f"1-min load average from {min(loads):.2f} to {max(loads):.2f} (before the first run: "
          f"{entries[0]['load before']}; after the last: {entries[-1]['load after']})")
    print(f"every run's output: {Path(record).resolve().relative_to(root) if Path(record).resolve().is_relative_to(root) else record}")
    print()
    columns = ["median", "min–max", "IQR", "swing"]
    rows = []
    for key in keys:
        row = [*key, *spread(samples[0][key])]
        if len(commits) == 2:
            b = samples[1].get(key)
            if not b:
                rows.append(row + ["–"] * 6)
                continue
            a_median, b_median = statistics.median(samples[0][key]), statistics.median(b)
            p, method = mann_whitney(samples[0][key], b)
            ratio = f"{b_median / a_median:.3f}" if a_median else "–"
            row += [*spread(b), ratio, f"{p:.3g}" + ("" if method == "exact" else "ⁿ")]
        rows.append(row)
    heading = ["workload", "scheduler", "metric"]
    if len(commits) == 2:
        print(table(heading + [f"A {c}" for c in columns] + [f"B {c}" for c in columns] + ["B/A", "p"], rows))
        print()
        print("B/A: ratio of the medians. p: two-sided Mann–Whitney U test, exact; ⁿ: normal approximation")
        print("(ties or over 40 runs). swing: (max − min) / median of one build's runs.")
    else:
        print(table(heading + columns, rows))
        print()
        print("swing: (max − min) / median of the runs.")


def main():
    argv = sys.argv[1:]
    passed = argv[argv.index("--") + 1 :] if "--" in argv else []
    own = argv[: argv.index("--")] if "--" in argv else argv
    parser = argparse.ArgumentParser(
        usage="scripts/drift.py [--runs R] [--workload W]... [--scheduler S]... [--metric M]... "
        "REV_A [REV_B] [-- LOOPSCHED_BENCH_ARGUMENT...]\n"
        "       scripts/drift.py --replay RECORD.jsonl [--scheduler S]... [--metric M]..."
    )
    parser.add_argument("revisions", nargs="*", metavar="REV")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--workload", action="append", default=[])
    parser.add_argument("--scheduler", action="append", default=[])
    parser.add_argument("--metric", action="append", default=[])
    parser.add_argument("--replay", metavar="RECORD")
    options = parser.parse_args(own)
    if options.replay and (options.revisions or passed or options.workload):
        parser.error("--replay takes no revision, workload or loopsched argument")
    if not options.replay and not 1 <= len(options.revisions) <= 2 or options.runs < 1:
        parser.error("one or two revisions, and --runs at least 1")
    root = Path(git(Path(__file__).resolve().parent, "rev-parse", "--show-toplevel").strip())
    report(options.replay or measure(options, root, passed), options, root)


if __name__ == "__main__":
    main()
