#!/usr/bin/env python3
"""`make test-allocations`: the allocation guard's check.

  check-allocations.py [--limits FILE] [--package-path DIR] [--update] PROBE...

For each PROBE, an executable product of the package at DIR (default: this repository): builds it
with `swift build -c release --product PROBE` and $SWIFT_BUILD_FLAGS, runs it and prints its table
as it is, then compares each path's mallocs per operation, thread by thread, with the probe's
section of FILE (default: Tests/AllocationLimits/limits.txt, whose header describes the guard,
the format, and how another product adds a probe):

  - a figure over its limit by more than the file's tolerance: FAIL, naming the path, the thread,
    the count and the limit (exit 1);
  - a figure under its limit by more than the tolerance: reported as lower, so that the limit can
    come down; it passes;
  - a path the probe measures without a limit, or a limit of a path it no longer measures: FAIL;
  - the probe's own self-checks (an action that did not run, a timer that fired after it was
    disposed: lines `FAILED: ...`, exit 1) fail it too.

A probe whose interposer is compiled out (a sanitizer build) prints "skipped"; that passes. When
`swift --version` names another version than the section's `toolchain` line, the counts are
printed and not checked, and the output says so (exit 0).

--update rewrites each probe's section with this toolchain and the counts just measured (review
the diff: a limit goes up only with the reason in the commit message).

Environment: SWIFT (swift), SWIFT_BUILD_FLAGS (the Makefile passes its warnings-as-errors and
traits flags, so the release build is the one `make run` uses). Python 3.11, standard library only.
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
COLUMNS = ("caller", "loop", "other")
WHERE = {"caller": "on the probe's thread", "loop": "on the loop's thread", "other": "on other threads"}


@dataclass
class Row:
    path: str
    figures: dict[str, float | None]  # per column; None where the path has no such thread ("-")
    note: str = ""  # the probe's description, or the limit's comment


def number(text: str) -> float | None:
    return None if text == "-" else float(text)


def shown(value: float | None) -> str:
    if value is None:
        return "-"
    text = f"{value:.2f}".rstrip("0").rstrip(".")
    return "0" if text == "-0" else text


def parse_probe(output: str) -> tuple[list[Row], list[str]]:
    """The probe's rows (path, caller, loop, other, frees, [varied(...)], # description) and its
    self-check failures."""
    rows, failures = [], []
    for line in output.splitlines():
        if line.startswith("FAILED:"):
            failures.append(line)
            continue
        if not line.strip() or line.startswith("#"):
            continue
        body, _, description = line.partition("  # ")
        fields = body.split()
        if len(fields) < 5:
            raise SystemExit(f"check-allocations: cannot read the probe's line: {line!r}")
        rows.append(Row(fields[0], dict(zip(COLUMNS, map(number, fields[1:4]))), description.strip()))
    return rows, failures


@dataclass
class Limits:
    tolerance: float
    toolchain: str | None
    rows: list[Row]


def section_bounds(lines: list[str], probe: str) -> tuple[int, int] | None:
    """The lines of `[probe]`'s section: from its header to the next header or the end."""
    start = next((i for i, line in enumerate(lines) if line.strip() == f"[{probe}]"), None)
    if start is None:
        return None
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("[")), len(lines))
    return start, end


def parse_limits(text: str, probe: str) -> Limits | None:
    lines = text.splitlines()
    tolerance = None
    for line in lines:
        if line.startswith("["):
            break
        if line.startswith("tolerance "):
            tolerance = float(line.split()[1])
    if tolerance is None:
        raise SystemExit("check-allocations: the limits file has no `tolerance` line before its sections")
    bounds = section_bounds(lines, probe)
    if bounds is None:
        return None
    toolchain, rows = None, []
    for line in lines[bounds[0] + 1 : bounds[1]]:
        body, _, comment = line.partition("#")
        fields = body.split()
        if not fields:
            continue
        if fields[0] == "toolchain":
            toolchain = fields[1]
            continue
        if len(fields) != 4:
            raise SystemExit(f"check-allocations: [{probe}]: cannot read the limit line {line!r}")
        rows.append(Row(fields[0], dict(zip(COLUMNS, map(number, fields[1:4]))), comment.strip()))
    return Limits(tolerance, toolchain, rows)


def toolchain(swift: str) -> str:
    output = subprocess.run([swift, "--version"], capture_output=True, text=True, check=True).stdout
    match = re.search(r"Swift version (\S+)", output)
    if not match:
        raise SystemExit(f"check-allocations: no version in `{swift} --version`: {output!r}")
    return match.group(1)


def section_text(probe: str, version: str, rows: list[Row]) -> list[str]:
    width = max([46] + [len(row.path) + 1 for row in rows])
    lines = [f"[{probe}]", f"toolchain {version}", f"{'# path':<{width}}" + "".join(f"{c:>8}" for c in COLUMNS)]
    for row in rows:
        figures = "".join(f"{shown(row.figures[c]):>8}" for c in COLUMNS)
        lines.append(f"{row.path:<{width}}{figures}  # {row.note}" if row.note else f"{row.path:<{width}}{figures}")
    return lines


def update(limits_file: Path, probe: str, version: str, rows: list[Row]) -> None:
    lines = limits_file.read_text().splitlines()
    new = section_text(probe, version, rows)
    bounds = section_bounds(lines, probe)
    if bounds is None:
        lines += [""] + new
    else:
        tail = lines[bounds[1] :]
        lines = lines[: bounds[0]] + new + ([""] if tail else []) + tail
    limits_file.write_text("\n".join(lines) + "\n")
    print(f"allocation guard, {probe}: {limits_file} updated for toolchain {version} ({len(rows)} paths)")


def compare(probe: str, measured: list[Row], limits: Limits) -> tuple[list[str], list[str]]:
    """Failures and lower figures, one line each."""
    failures, lower = [], []
    allowed = {row.path: row for row in limits.rows}
    seen = set()
    for row in measured:
        seen.add(row.path)
        limit = allowed.get(row.path)
        if limit is None:
            failures.append(f"FAIL {row.path}: no limit in [{probe}] (add one, or run with --update)")
            continue
        for column in COLUMNS:
            count, bound = row.figures[column], limit.figures[column]
            if (count is None) != (bound is None):
                failures.append(f"FAIL {row.path}: {column} is {shown(count)} per operation, its limit {shown(bound)}")
                continue
            if count is None or bound is None:
                continue
            if count > bound + limits.tolerance + 1e-9:
                failures.append(
                    f"FAIL {row.path}: {shown(count)} mallocs per operation {WHERE[column]}, "
                    f"limit {shown(bound)} (tolerance {shown(limits.tolerance)})"
                )
            elif count < bound - limits.tolerance - 1e-9:
                lower.append(
                    f"lower {row.path}: {shown(count)} mallocs per operation {WHERE[column]}, "
                    f"limit {shown(bound)}: the limit can come down"
                )
    for path in allowed:
        if path not in seen:
            failures.append(f"FAIL {path}: has a limit in [{probe}] but the probe did not measure it")
    return failures, lower


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("probes", nargs="+", metavar="PROBE")
    parser.add_argument("--limits", type=Path, default=ROOT / "Tests/AllocationLimits/limits.txt")
    parser.add_argument("--package-path", type=Path, default=ROOT)
    parser.add_argument("--update", action="store_true")
    args = parser.parse_args()
    swift = os.environ.get("SWIFT", "swift")
    flags = shlex.split(os.environ.get("SWIFT_BUILD_FLAGS", ""))
    build = [swift, "build", "-c", "release", "--package-path", str(args.package_path), *flags]
    version = toolchain(swift)
    status = 0
    for probe in args.probes:
        started = time.monotonic()
        subprocess.run([*build, "--product", probe], check=True)
        built = time.monotonic()
        bin_path = subprocess.run([*build, "--show-bin-path"], capture_output=True, text=True, check=True).stdout
        result = subprocess.run([str(Path(bin_path.strip()) / probe)], capture_output=True, text=True, timeout=900)
        print(result.stdout, end="")
        print(result.stderr, end="", file=sys.stderr)
        timing = f"built in {built - started:.0f} s, ran in {time.monotonic() - built:.0f} s"
        first_line = result.stdout.splitlines()[0] if result.stdout else ""
        if result.returncode == 0 and "skipped" in first_line:
            print(f"allocation guard, {probe}: skipped ({timing})")
            continue
        measured, self_checks = parse_probe(result.stdout)
        if result.returncode != 0 or self_checks:
            print(f"FAIL {probe}: the probe's self-checks failed (exit {result.returncode}); see above")
            status = 1
            continue
        if args.update:
            update(args.limits, probe, version, measured)
            continue
        limits = parse_limits(args.limits.read_text(), probe)
        if limits is None:
            print(f"FAIL {probe}: no section [{probe}] in {args.limits} (run with --update to record one)")
            status = 1
            continue
        if limits.toolchain != version:
            print(
                f"allocation guard, {probe}: toolchain {version}, but its limits were recorded with "
                f"{limits.toolchain}: not checked (the counts above are this toolchain's; record them "
                f"with `scripts/check-allocations.py --update {probe}`)"
            )
            continue
        failures, lower = compare(probe, measured, limits)
        for line in lower + failures:
            print(line)
        print(
            f"allocation guard, {probe} (toolchain {version}): {len(measured)} paths, "
            f"{len(failures)} failed, {len(lower)} lower than their limits ({timing})"
        )
        if failures:
            status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())
