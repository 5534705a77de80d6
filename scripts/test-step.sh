#!/usr/bin/env bash
# Runs one test command (`make test`'s steps), its output passed through as usual and kept in a
# log; if it fails, its failures are printed again as the last lines, so a CI that shows only the
# tail of the output still shows which test failed and why.
# A step that runs longer than STEP_LIMIT seconds (default 1500: the slowest step, the sanitizer
# build and run on a clean clone, takes about a third of it) is a hang: it is stopped with its
# whole process group (`timeout` signals the group, so the test process goes too) and fails.
#   scripts/test-step.sh NAME COMMAND [ARGS...]
set -uo pipefail
name="$1"
shift
limit="${STEP_LIMIT:-1500}"
mkdir -p .build/test-logs
log=".build/test-logs/$name.log"
timeout -k 30 "$limit" "$@" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
if [ "$status" -eq 124 ] || [ "$status" -eq 137 ]; then
    echo "$name: time limit of $limit s reached; the step was stopped (a hang)" | tee -a "$log"
fi
if [ "$status" -ne 0 ]; then
    echo
    echo "=== $name failed (exit $status); its failures (full log: $log) ==="
    grep -E -A4 "recorded an issue|Fatal error|fatal error:|error:|ERROR: (Address|Thread|Leak)Sanitizer|WARNING: ThreadSanitizer|SUMMARY: |Test .* failed|crashed|timed out|time limit|^FAIL |^FAILED: " "$log" \
        | grep -v -E "^\s*$" | tail -n 80
    echo "=== end of $name's failures ==="
fi
exit "$status"
