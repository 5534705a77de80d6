#!/usr/bin/env bash
# `make examples`: every ```swift block of README.md and of the DocC articles
# (Sources/*/*.docc/**/*.md) compiles from a package outside this one, and every program block runs.
#
# scripts/extract-examples.py writes the consumer package, .build-examples/consumer: a path
# dependency on this checkout (identity: the folder's name, as scripts/check-resolution.sh
# computes it), the products a user depends on, public API only (no @testable, no @_spi, and
# `package` symbols are out of reach from another package). The marker convention (fragment,
# `<!-- example: declarations -->`, `program`, `trait=NAME`, `skip`) is in
# Tests/ExamplesConsumer/README.md; the user-side names fragments may use are in
# Tests/ExamplesConsumer/Stubs.swift.
#
# One `swift build` of the consumer; if it fails, each target is built again alone so that every
# failing block is reported, not only the first target's. Errors name the documentation's lines
# (README.md:LINE:COL: the generated files carry #sourceLocation). Then each program runs, with
# a time limit, and must exit 0. Prints one summary line; exits 1 if any block fails.
#
#   scripts/check-examples.sh [all|core|traits]   (default all; core: the blocks without traits,
#                                                  traits: the blocks with one, in their own package)
# Environment: SWIFT (swift), PYTHON (python3), EXAMPLES_TIMEOUT (20, seconds per program),
# EXAMPLES_SCRATCH (.build-examples).
set -uo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
swift="${SWIFT:-swift}"
python="${PYTHON:-python3}"
only="${1:-all}"
limit="${EXAMPLES_TIMEOUT:-20}"
scratch="${EXAMPLES_SCRATCH:-$root/.build-examples}"
case "$only" in
all) consumer="$scratch/consumer" ;;
core | traits) consumer="$scratch/consumer-$only" ;; # another package: another dependency line
*)
    echo "usage: $0 [all|core|traits]" >&2
    exit 2
    ;;
esac
logs="$consumer/logs"
start=$SECONDS
step=examples
[ "$only" = all ] || step="examples ($only)"

"$python" "$root/scripts/extract-examples.py" generate --root "$root" --out "$consumer" --only "$only" || exit 1
read -r total fragments declarations _ traited skipped problems <"$consumer/counts.txt"
rm -rf "$logs"
mkdir -p "$logs"

build_flags=(--package-path "$consumer" -Xswiftc -diagnostic-style=llvm)
# SwiftPM passes a dependency's enabled traits as -D flags in the order of a Swift Set, which
# changes from one process to the next: with two traits or more every build would recompile this
# package's modules. Deterministic hashing keeps the order, so a second run is incremental.
export SWIFT_DETERMINISTIC_HASHING=1
failed_build=0
declare -A built=()
if [ "$total" -gt 0 ]; then
    if "$swift" build "${build_flags[@]}" >"$logs/build.log" 2>&1; then
        while read -r what name _; do built[$name]=1; done <"$consumer/targets.txt"
    else
        failed_build=1
        # One target at a time, so that each failing target reports its errors (the ones built
        # already are no-ops).
        while read -r what name _; do
            if [ "$what" = library ]; then flag=--target; else flag=--product; fi
            if "$swift" build "${build_flags[@]}" "$flag" "$name" >"$logs/build-$name.log" 2>&1; then
                built[$name]=1
            fi
        done <"$consumer/targets.txt"
    fi
fi

report_status=0
report_logs=()
for log in "$logs"/build*.log; do [ -f "$log" ] && report_logs+=(--log "$log"); done
[ "${#report_logs[@]}" -gt 0 ] || report_logs=(--log /dev/null)
"$python" "$root/scripts/extract-examples.py" report --out "$consumer" "${report_logs[@]}" || report_status=1
if [ "$failed_build" -eq 1 ] && [ "$report_status" -eq 0 ]; then
    # The build failed, but not at a block's line: show the build's own words.
    echo "FAIL the consumer package did not build (log: $logs/build.log):"
    grep -E "error:|warning:" "$logs/build.log" | sed 's/^/  /' | head -40
    report_status=1
fi

# The programs: each runs alone, with a time limit, and must exit 0.
ran=0
run_failures=0
bin="$consumer/.build/debug"
stdbuf=()
command -v stdbuf >/dev/null 2>&1 && stdbuf=(stdbuf -oL -eL)
while read -r what name label; do
    [ "$what" = program ] || continue
    [ -n "${built[$name]:-}" ] || continue
    status=0
    # Line-buffered (stdbuf), so that a program stopped at the time limit still shows its output;
    # the group's 2>/dev/null keeps the shell's own "Illegal instruction" line out of the log.
    {
        SWIFT_BACKTRACE="${SWIFT_BACKTRACE:-enable=no}" timeout -k 5 "$limit" \
            ${stdbuf[@]+"${stdbuf[@]}"} "$bin/$name" </dev/null >"$logs/$name.out" 2>&1 || status=$?
    } 2>/dev/null
    ran=$((ran + 1))
    if [ "$status" -ne 0 ]; then
        run_failures=$((run_failures + 1))
        if [ "$status" -eq 124 ] || [ "$status" -eq 137 ]; then
            echo "FAIL $label: the program block did not finish within ${limit} s; its last output:"
        else
            echo "FAIL $label: the program block exited with status $status; its last output:"
        fi
        sed '/^Current stack trace:/q' "$logs/$name.out" | tail -n 30 | sed 's/^/    /'
    fi
done <"$consumer/targets.txt"

elapsed=$((SECONDS - start))
read -r not_compiling marker_problems outside <"$consumer/report.txt" || true
if [ "$problems" -gt 0 ] || [ "$report_status" -ne 0 ] || [ "$run_failures" -ne 0 ]; then
    summary="$not_compiling block(s) that do not compile, $marker_problems problem(s) found before compiling"
    [ "${outside:-0}" -gt 0 ] && summary+=", $outside error(s) outside the blocks"
    summary+=", $run_failures of $ran program(s) failed"
    echo "$step: FAILED: $summary ($elapsed s; logs: ${logs#"$root"/})"
    exit 1
fi
echo "$step: $total blocks ($fragments fragments, $declarations declarations, $ran programs run, $traited trait) compiled from an outside consumer; $skipped skipped ($elapsed s)"
