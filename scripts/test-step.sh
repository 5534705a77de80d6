#!/usr/bin/env bash
# Runs one test command (`make test`'s steps), its output passed through as usual and kept in a
# log; if it fails, its failures are printed again as the last lines, so a CI that shows only the
# tail of the output still shows which test failed and why.
#   scripts/test-step.sh NAME COMMAND [ARGS...]
set -uo pipefail
name="$1"
shift
mkdir -p .build/test-logs
log=".build/test-logs/$name.log"
"$@" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
if [ "$status" -ne 0 ]; then
    echo
    echo "=== $name failed (exit $status); its failures (full log: $log) ==="
    grep -E -A4 "recorded an issue|Fatal error|fatal error:|error:|ERROR: (Address|Thread|Leak)Sanitizer|WARNING: ThreadSanitizer|SUMMARY: |Test .* failed|crashed|timed out|time limit|^FAIL |^FAILED: " "$log" \
        | grep -v -E "^\s*$" | tail -n 80
    echo "=== end of $name's failures ==="
fi
exit "$status"
