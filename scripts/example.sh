#!/usr/bin/env bash
# `make example`: builds Examples/TimeoutServer (release) and loads it with wrk once per way of
# arming a request's timeout — `loop` (withTimeout on a LoopSchedulerGroup) and `taskgroup` (a
# Task.sleep race) — then prints one table.
#
# Per mode: start the server on a free port of 127.0.0.1, wait until it answers, run
# `wrk -t2 -c64 -d10s --latency` against `/` while a fixed number of `/slow?ms=200` requests (each
# must answer 504: the route's deadline is 50 ms) go one after another, read `/metrics`, pause one
# second, read the server's VmRSS, send SIGTERM and wait for a clean exit.
#
# Fails (non-zero) if timeouts fired differ from slow requests sent (so none of the fast requests
# timed out), if a slow request did not answer 504 or a fast one answered anything but 2xx, if in
# `loop` mode the loops' fired timers differ from the timeouts (none in `taskgroup` mode), if the
# server did not log each slow request's 504 with the trace id its `traceparent` header gave (the
# line is written by a loop: only SchedulingTracing's wrapper carries the id there), or if a
# server did not shut down cleanly (exit 0 within 20 s of SIGTERM).
#
# Environment: SWIFT (swift), EXAMPLE_MODES ("loop taskgroup"), EXAMPLE_DURATION (10s),
# EXAMPLE_CONNECTIONS (64), EXAMPLE_THREADS (2), EXAMPLE_SLOW_REQUESTS (20), EXAMPLE_PORT (0: any
# free port), EXAMPLE_EXECUTORS (default: Swift's own executors; `loops`: the server built on
# LoopExecutorFactory, trait ExperimentalExecutors, in a build directory of its own).
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
package="$root/Examples/TimeoutServer"
scratch="$package/.build"
if [ "${EXAMPLE_EXECUTORS:-default}" = "loops" ]; then
    export TIMEOUTSERVER_EXECUTORS=loops
    scratch="$package/.build-loops"
fi
swift="${SWIFT:-swift}"
modes="${EXAMPLE_MODES:-loop taskgroup}"
duration="${EXAMPLE_DURATION:-10s}"
connections="${EXAMPLE_CONNECTIONS:-64}"
threads="${EXAMPLE_THREADS:-2}"
slow_requests="${EXAMPLE_SLOW_REQUESTS:-20}"
port_flag="${EXAMPLE_PORT:-0}"

work="$(mktemp -d "${TMPDIR:-/tmp}/timeout-server.XXXXXX")"
server_pid=""
slow_pid=""
current_log=""

cleanup() {
    local status=$?
    trap - EXIT
    for pid in "$slow_pid" "$server_pid"; do
        if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
            kill -KILL "$pid" 2>/dev/null || true
            wait "$pid" 2>/dev/null || true
        fi
    done
    if [ "$status" -ne 0 ] && [ -n "$current_log" ] && [ -s "$current_log" ]; then
        echo "--- server log (last 20 lines) ---" >&2
        tail -n 20 "$current_log" >&2
    fi
    rm -rf "$work"
    exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

fail() {
    echo "error: $*" >&2
    exit 1
}

# Alive and not a zombie (`kill -0` succeeds on a child that exited but was not reaped yet).
alive() {
    local state
    state="$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null)" || return 1
    [ -n "$state" ] && [ "$state" != Z ]
}

# curl to the server only: no proxy, bounded in time.
fetch() {
    curl --noproxy '*' --silent --show-error --max-time 5 "$@"
}

ensure_tools() {
    local missing=()
    command -v wrk >/dev/null 2>&1 || missing+=(wrk)
    command -v curl >/dev/null 2>&1 || missing+=(curl)
    [ ${#missing[@]} -eq 0 ] && return 0
    local sudo=""
    if [ "$(id -u)" -ne 0 ]; then
        command -v sudo >/dev/null 2>&1 || fail "${missing[*]} missing and installing needs root (no sudo here): apt-get install -y ${missing[*]}"
        sudo="sudo"
    fi
    echo "Installing ${missing[*]} (apt-get)..." >&2
    export DEBIAN_FRONTEND=noninteractive
    $sudo apt-get update -qq && $sudo apt-get install -y -qq "${missing[@]}" >/dev/null ||
        fail "apt-get could not install ${missing[*]}"
}

# A Prometheus sample's value, summed over its label sets (0 when absent).
metric() {
    awk -v name="$1" '$1 == name || index($1, name "{") == 1 { sum += $NF } END { printf "%d\n", sum }' "$2"
}

# The trace id the i-th slow request sends (32 hex digits, never all zero).
trace_id() {
    printf '4bf92f3577b34da6%016x' "$1"
}

kib_to_mib() {
    awk -v kib="$1" 'BEGIN { printf "%.1f MiB", kib / 1024 }'
}

ensure_tools
"$root/scripts/ensure-libuv.sh"

echo "Building Examples/TimeoutServer (release; the first build compiles Hummingbird and SwiftNIO: minutes)..."
# The same flags for both calls: other flags would make the next build plan itself anew (~15 s).
build_flags=(--package-path "$package" --scratch-path "$scratch" -c release -Xswiftc -warnings-as-errors)
build_start=$SECONDS
"$swift" build "${build_flags[@]}"
build_seconds=$((SECONDS - build_start))
bin="$("$swift" build "${build_flags[@]}" --show-bin-path)/TimeoutServer"
[ -x "$bin" ] || fail "no executable at $bin"
echo "Built in ${build_seconds}s."

rows=()
failures=()

run_mode() {
    local mode=$1
    local log="$work/$mode.log"
    current_log="$log"

    # Created here, not by the background job's redirection, which may not have run yet when the
    # loop below first reads the log.
    : >"$log"
    "$bin" --timeouts "$mode" --port "$port_flag" >>"$log" 2>&1 &
    server_pid=$!

    # The server logs its port once it listens; then wait for it to answer.
    local port="" deadline=$((SECONDS + 30))
    while :; do
        port="$(sed -n 's/.*\[TimeoutServer\] listening on 127\.0\.0\.1:\([0-9][0-9]*\).*/\1/p' "$log" | head -n 1)"
        [ -n "$port" ] && break
        alive "$server_pid" || fail "$mode: the server exited during start-up"
        [ "$SECONDS" -lt "$deadline" ] || fail "$mode: the server did not start listening within 30 s"
        sleep 0.05
    done
    local base="http://127.0.0.1:$port"
    until fetch --output /dev/null --fail "$base/" 2>/dev/null; do
        alive "$server_pid" || fail "$mode: the server exited before answering"
        [ "$SECONDS" -lt "$deadline" ] || fail "$mode: the server did not answer within 30 s"
        sleep 0.05
    done
    echo "== $mode: listening on $base (pid $server_pid); wrk -t$threads -c$connections -d$duration, $slow_requests slow requests"

    # The slow requests, one after another, a second into the load.
    (
        sleep 1
        for i in $(seq 1 "$slow_requests"); do
            fetch --output /dev/null --write-out '%{http_code} %{time_total}\n' \
                --header "traceparent: 00-$(trace_id "$i")-00f067aa0ba902b7-01" "$base/slow?ms=200" || echo "000 0"
        done
    ) >"$work/$mode.slow" &
    slow_pid=$!
    wrk -t"$threads" -c"$connections" -d"$duration" --latency "$base/" >"$work/$mode.wrk"
    wait "$slow_pid" || fail "$mode: the slow requests failed"
    slow_pid=""
    sed 's/^/    /' "$work/$mode.wrk"

    fetch --fail --output "$work/$mode.metrics" "$base/metrics" || fail "$mode: GET /metrics failed"
    sleep 1
    local rss_kib hwm_kib
    rss_kib="$(awk '$1 == "VmRSS:" { print $2 }' "/proc/$server_pid/status")"
    hwm_kib="$(awk '$1 == "VmHWM:" { print $2 }' "/proc/$server_pid/status")"

    # Graceful shutdown through the ServiceGroup.
    kill -TERM "$server_pid"
    deadline=$((SECONDS + 20))
    while alive "$server_pid"; do
        [ "$SECONDS" -lt "$deadline" ] || fail "$mode: the server did not stop within 20 s of SIGTERM"
        sleep 0.05
    done
    local exit_code=0
    wait "$server_pid" || exit_code=$?
    server_pid=""
    [ "$exit_code" -eq 0 ] || failures+=("$mode: the server exited with $exit_code after SIGTERM (expected 0)")
    grep -q '\[TimeoutServer\] stopped' "$log" || failures+=("$mode: the server did not log its graceful stop")

    local rps p99 non2xx socket_errors
    rps="$(awk '$1 == "Requests/sec:" { print $2 }' "$work/$mode.wrk")"
    p99="$(awk '$1 == "99%" { print $2 }' "$work/$mode.wrk")"
    non2xx="$(awk -F': ' '/Non-2xx or 3xx responses/ { print $2 }' "$work/$mode.wrk")"
    socket_errors="$(awk -F': ' '/Socket errors/ { print $2 }' "$work/$mode.wrk")"
    [ -n "$rps" ] && [ -n "$p99" ] || fail "$mode: could not read wrk's output"

    local fired slow_counted loop_timers slow_504 slow_max
    fired="$(metric timeouts_fired_total "$work/$mode.metrics")"
    slow_counted="$(awk '$1 == "requests_total{route=\"slow\"}" { printf "%d\n", $2 }' "$work/$mode.metrics")"
    loop_timers="$(metric loop_scheduler_timers_fired_total "$work/$mode.metrics")"
    slow_504="$(awk '$1 == "504" { n++ } END { print n + 0 }' "$work/$mode.slow")"
    slow_max="$(awk '{ if ($2 > max) max = $2 } END { printf "%.0f ms\n", max * 1000 }' "$work/$mode.slow")"

    [ "$fired" -eq "$slow_requests" ] ||
        failures+=("$mode: $fired timeouts fired for $slow_requests slow requests sent")
    [ "$slow_504" -eq "$slow_requests" ] ||
        failures+=("$mode: $slow_504 of $slow_requests slow requests answered 504 (codes: $(cut -d' ' -f1 "$work/$mode.slow" | sort | uniq -c | tr -s ' \n' ' '))")
    [ "${slow_counted:-0}" -eq "$slow_requests" ] ||
        failures+=("$mode: the server counted ${slow_counted:-0} slow requests, $slow_requests were sent")
    [ -z "$non2xx" ] || failures+=("$mode: $non2xx fast requests answered non-2xx")
    local traced=0 i
    for i in $(seq 1 "$slow_requests"); do
        grep -q "trace_id=$(trace_id "$i") .*504: " "$log" && traced=$((traced + 1))
    done
    [ "$traced" -eq "$slow_requests" ] ||
        failures+=("$mode: $traced of $slow_requests timed-out requests were logged with their trace id")

    local expected_timers=0
    [ "$mode" = loop ] && expected_timers="$fired"
    [ "$loop_timers" -eq "$expected_timers" ] ||
        failures+=("$mode: the loops fired $loop_timers timers, expected $expected_timers")
    [ -z "$socket_errors" ] || echo "note: $mode: wrk socket errors: $socket_errors" >&2

    rows+=("| $mode | $rps | $p99 | $(kib_to_mib "$rss_kib") | $(kib_to_mib "$hwm_kib") | $fired | $slow_requests | $slow_max | $loop_timers | $exit_code |")
    current_log=""
}

for mode in $modes; do
    run_mode "$mode"
done

echo
echo "TimeoutServer, wrk -t$threads -c$connections -d$duration on /, $slow_requests × /slow?ms=200 (50 ms deadline), build ${build_seconds}s:"
echo
echo "| timeouts | requests/s | p99 latency | RSS after run | peak RSS | timeouts fired | slow requests sent | slowest 504 | loop timers fired | exit |"
echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
printf '%s\n' "${rows[@]}"

if [ ${#failures[@]} -ne 0 ]; then
    echo >&2
    printf 'FAILED: %s\n' "${failures[@]}" >&2
    exit 1
fi
echo
echo "OK: every slow request timed out (504) and was logged with its trace id, no fast one timed out; every server stopped cleanly."
