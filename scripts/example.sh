#!/usr/bin/env bash
# `make example`: builds Examples/TimeoutServer (release; two servers) and loads each under wrk once
# per way of arming a request's timeout, then prints one table:
# - TimeoutServer (Hummingbird 2; its handlers run on Swift's global executor, so every mode arms
#   from a thread that is not the connection's event loop): `loop` (withTimeout on a
#   LoopSchedulerGroup), `taskgroup` (a Task.sleep race), `eventloop` (withTimeout on the
#   EventLoopScheduler of the connection's event loop), `nio` (SwiftNIO's scheduleTask + cancel);
# - NIOTimeoutServer (NIOHTTP1; a channel handler arms its timers in channelRead, on the loop):
#   `eventloop` (the loop's EventLoopScheduler) and `nio` (SwiftNIO's scheduleTask + cancel).
#
# Per server and mode (the two servers' modes alternate): start the server on a free port of
# 127.0.0.1, wait until it answers, run `wrk -t2 -c64 -d5s --latency` against `/` while a fixed
# number of `/slow?ms=200` requests (each must answer 504: the route's deadline is 50 ms) go one
# after another, read `/metrics`, pause one second, read the server's VmRSS and CPU time, send
# SIGTERM and wait for a clean exit. EXAMPLE_ROUNDS > 1 runs the whole sequence again and adds a
# table of medians.
#
# Fails (non-zero) if timeouts fired differ from slow requests sent (so none of the fast requests
# timed out), if a slow request did not answer 504 or a fast one answered anything but 2xx, if the
# server did not log each slow request's 504 (TimeoutServer: with the trace id its `traceparent`
# header gave, a line written by a loop, to which the context is carried), if in TimeoutServer's
# `loop` mode the loops' fired timers differ from the timeouts (none in the other modes), or if a
# server did not shut down cleanly (exit 0 within 20 s of SIGTERM).
#
# Environment: SWIFT (swift), EXAMPLE_MODES (TimeoutServer's: "loop taskgroup eventloop nio"),
# EXAMPLE_NIO_MODES (NIOTimeoutServer's: "eventloop nio"; empty: not run), EXAMPLE_DURATION (5s),
# EXAMPLE_CONNECTIONS (64), EXAMPLE_THREADS (2), EXAMPLE_SLOW_REQUESTS (20), EXAMPLE_ROUNDS (1),
# EXAMPLE_PORT (0: any free port), EXAMPLE_EXECUTORS (default: Swift's own executors; `loops`:
# TimeoutServer built on LoopExecutorFactory, trait ExperimentalExecutors, in a build directory of
# its own; NIOTimeoutServer is then not run unless EXAMPLE_NIO_MODES says so).
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
package="$root/Examples/TimeoutServer"
scratch="$package/.build"
nio_modes_default="eventloop nio"
if [ "${EXAMPLE_EXECUTORS:-default}" = "loops" ]; then
    export TIMEOUTSERVER_EXECUTORS=loops
    scratch="$package/.build-loops"
    nio_modes_default=""
fi
swift="${SWIFT:-swift}"
modes="${EXAMPLE_MODES-loop taskgroup eventloop nio}"
nio_modes="${EXAMPLE_NIO_MODES-$nio_modes_default}"
duration="${EXAMPLE_DURATION:-5s}"
connections="${EXAMPLE_CONNECTIONS:-64}"
threads="${EXAMPLE_THREADS:-2}"
slow_requests="${EXAMPLE_SLOW_REQUESTS:-20}"
rounds="${EXAMPLE_ROUNDS:-1}"
port_flag="${EXAMPLE_PORT:-0}"
[[ "$rounds" =~ ^[1-9][0-9]*$ ]] || { echo "error: EXAMPLE_ROUNDS must be a positive integer" >&2; exit 1; }

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

# wrk's latency ("950.00us", "8.44ms", "1.02s") in milliseconds.
latency_ms() {
    awk -v value="$1" 'BEGIN {
        scale = 1
        if (value ~ /us$/) scale = 0.001
        else if (value ~ /ms$/) scale = 1
        else if (value ~ /m$/) scale = 60000
        else if (value ~ /s$/) scale = 1000
        sub(/[a-z]+$/, "", value)
        printf "%.2f\n", value * scale
    }'
}

ensure_tools
"$root/scripts/ensure-libuv.sh"

echo "Building Examples/TimeoutServer (release, TimeoutServer and NIOTimeoutServer; the first build compiles Hummingbird and SwiftNIO: minutes)..."
# The same flags for both calls: other flags would make the next build plan itself anew (~15 s).
build_flags=(--package-path "$package" --scratch-path "$scratch" -c release -Xswiftc -warnings-as-errors)
build_start=$SECONDS
"$swift" build "${build_flags[@]}"
build_seconds=$((SECONDS - build_start))
bin_dir="$("$swift" build "${build_flags[@]}" --show-bin-path)"
for server in TimeoutServer NIOTimeoutServer; do
    [ -x "$bin_dir/$server" ] || fail "no executable at $bin_dir/$server"
done
echo "Built in ${build_seconds}s."

rows=()
failures=()
clock_ticks="$(getconf CLK_TCK)"
# One line per run for the medians: server, mode, requests/s, p99 (ms), RSS after (KiB), peak (KiB),
# the server's CPU per request (µs).
summary="$work/summary"
: >"$summary"

# run_mode SERVER MODE ROUND
run_mode() {
    local server=$1 mode=$2 round=$3
    local name="$server-$mode-$round"
    local log="$work/$name.log"
    current_log="$log"

    # Created here, not by the background job's redirection, which may not have run yet when the
    # loop below first reads the log.
    : >"$log"
    "$bin_dir/$server" --timeouts "$mode" --port "$port_flag" >>"$log" 2>&1 &
    server_pid=$!

    # The server logs its port once it listens; then wait for it to answer.
    local port="" deadline=$((SECONDS + 30))
    while :; do
        port="$(sed -n "s/.*\\[$server\\] listening on 127\\.0\\.0\\.1:\\([0-9][0-9]*\\).*/\\1/p" "$log" | head -n 1)"
        [ -n "$port" ] && break
        alive "$server_pid" || fail "$server $mode: the server exited during start-up"
        [ "$SECONDS" -lt "$deadline" ] || fail "$server $mode: the server did not start listening within 30 s"
        sleep 0.05
    done
    local base="http://127.0.0.1:$port"
    until fetch --output /dev/null --fail "$base/" 2>/dev/null; do
        alive "$server_pid" || fail "$server $mode: the server exited before answering"
        [ "$SECONDS" -lt "$deadline" ] || fail "$server $mode: the server did not answer within 30 s"
        sleep 0.05
    done
    echo "== $server --timeouts $mode (round $round): listening on $base (pid $server_pid); wrk -t$threads -c$connections -d$duration, $slow_requests slow requests"

    # The slow requests, one after another, a second into the load.
    (
        sleep 1
        for i in $(seq 1 "$slow_requests"); do
            fetch --output /dev/null --write-out '%{http_code} %{time_total}\n' \
                --header "traceparent: 00-$(trace_id "$i")-00f067aa0ba902b7-01" "$base/slow?ms=200" || echo "000 0"
        done
    ) >"$work/$name.slow" &
    slow_pid=$!
    wrk -t"$threads" -c"$connections" -d"$duration" --latency "$base/" >"$work/$name.wrk"
    wait "$slow_pid" || fail "$server $mode: the slow requests failed"
    slow_pid=""
    sed 's/^/    /' "$work/$name.wrk"

    fetch --fail --output "$work/$name.metrics" "$base/metrics" || fail "$server $mode: GET /metrics failed"
    sleep 1
    local rss_kib hwm_kib cpu_ticks
    rss_kib="$(awk '$1 == "VmRSS:" { print $2 }' "/proc/$server_pid/status")"
    hwm_kib="$(awk '$1 == "VmHWM:" { print $2 }' "/proc/$server_pid/status")"
    # The server's CPU time so far (user + system, start-up included), in clock ticks: per request,
    # a figure that other processes' load moves far less than requests per second.
    cpu_ticks="$(sed 's/^.*) //' "/proc/$server_pid/stat" | awk '{ print $12 + $13 }')"

    # Graceful shutdown through the ServiceGroup.
    kill -TERM "$server_pid"
    deadline=$((SECONDS + 20))
    while alive "$server_pid"; do
        [ "$SECONDS" -lt "$deadline" ] || fail "$server $mode: the server did not stop within 20 s of SIGTERM"
        sleep 0.05
    done
    local exit_code=0
    wait "$server_pid" || exit_code=$?
    server_pid=""
    [ "$exit_code" -eq 0 ] || failures+=("$server $mode: the server exited with $exit_code after SIGTERM (expected 0)")
    grep -q "\\[$server\\] stopped" "$log" || failures+=("$server $mode: the server did not log its graceful stop")

    local rps p99 non2xx socket_errors requests cpu_us
    rps="$(awk '$1 == "Requests/sec:" { print $2 }' "$work/$name.wrk")"
    requests="$(awk '$2 == "requests" && $3 == "in" { print $1 }' "$work/$name.wrk")"
    p99="$(awk '$1 == "99%" { print $2 }' "$work/$name.wrk")"
    non2xx="$(awk -F': ' '/Non-2xx or 3xx responses/ { print $2 }' "$work/$name.wrk")"
    socket_errors="$(awk -F': ' '/Socket errors/ { print $2 }' "$work/$name.wrk")"
    [ -n "$rps" ] && [ -n "$p99" ] && [ -n "$requests" ] || fail "$server $mode: could not read wrk's output"
    cpu_us="$(awk -v ticks="$cpu_ticks" -v hz="$clock_ticks" -v n="$requests" 'BEGIN { printf "%.1f\n", ticks / hz * 1e6 / n }')"

    local fired slow_counted loop_timers idle_fired slow_504 slow_max
    fired="$(metric timeouts_fired_total "$work/$name.metrics")"
    slow_counted="$(awk '$1 == "requests_total{route=\"slow\"}" { printf "%d\n", $2 }' "$work/$name.metrics")"
    loop_timers="$(metric loop_scheduler_timers_fired_total "$work/$name.metrics")"
    idle_fired="$(metric idle_timeouts_fired_total "$work/$name.metrics")"
    slow_504="$(awk '$1 == "504" { n++ } END { print n + 0 }' "$work/$name.slow")"
    slow_max="$(awk '{ if ($2 > max) max = $2 } END { printf "%.0f ms\n", max * 1000 }' "$work/$name.slow")"

    [ "$fired" -eq "$slow_requests" ] ||
        failures+=("$server $mode: $fired timeouts fired for $slow_requests slow requests sent")
    [ "$slow_504" -eq "$slow_requests" ] ||
        failures+=("$server $mode: $slow_504 of $slow_requests slow requests answered 504 (codes: $(cut -d' ' -f1 "$work/$name.slow" | sort | uniq -c | tr -s ' \n' ' '))")
    [ "${slow_counted:-0}" -eq "$slow_requests" ] ||
        failures+=("$server $mode: the server counted ${slow_counted:-0} slow requests, $slow_requests were sent")
    [ -z "$non2xx" ] || failures+=("$server $mode: $non2xx fast requests answered non-2xx")
    if [ "$server" = TimeoutServer ]; then
        local traced=0 i
        for i in $(seq 1 "$slow_requests"); do
            grep -q "trace_id=$(trace_id "$i") .*504: " "$log" && traced=$((traced + 1))
        done
        [ "$traced" -eq "$slow_requests" ] ||
            failures+=("$server $mode: $traced of $slow_requests timed-out requests were logged with their trace id")
        local expected_timers=0
        [ "$mode" = loop ] && expected_timers="$fired"
        [ "$loop_timers" -eq "$expected_timers" ] ||
            failures+=("$server $mode: the loops fired $loop_timers timers, expected $expected_timers")
        idle_fired="–"
    else
        # The NIO server has no LoopSchedulerGroup; its handler logs each 504 with the request's URI.
        local logged
        logged="$(grep -c '504: .* of /slow?ms=200 passed first' "$log" || true)"
        [ "$logged" -eq "$slow_requests" ] ||
            failures+=("$server $mode: $logged of $slow_requests timed-out requests were logged")
        loop_timers="–"
    fi
    [ -z "$socket_errors" ] || echo "note: $server $mode: wrk socket errors: $socket_errors" >&2

    rows+=("| $server | $mode | $rps | $p99 | $cpu_us µs | $(kib_to_mib "$rss_kib") | $(kib_to_mib "$hwm_kib") | $fired | $slow_requests | $slow_504 | $slow_max | $loop_timers | $idle_fired | $exit_code |")
    echo "$server $mode $rps $(latency_ms "$p99") $rss_kib $hwm_kib $cpu_us" >>"$summary"
    current_log=""
}

# The two servers' modes alternate (TimeoutServer's first mode, NIOTimeoutServer's first, ...), and
# each round runs them all again, so a change in the machine's load spreads over every mode.
runs=()
read -r -a hummingbird_modes <<<"$modes"
read -r -a plain_nio_modes <<<"$nio_modes"
for ((i = 0; i < ${#hummingbird_modes[@]} || i < ${#plain_nio_modes[@]}; i++)); do
    [ "$i" -lt "${#hummingbird_modes[@]}" ] && runs+=("TimeoutServer ${hummingbird_modes[$i]}")
    [ "$i" -lt "${#plain_nio_modes[@]}" ] && runs+=("NIOTimeoutServer ${plain_nio_modes[$i]}")
done
[ ${#runs[@]} -gt 0 ] || fail "no mode to run (EXAMPLE_MODES and EXAMPLE_NIO_MODES are empty)"
run_start=$SECONDS
for round in $(seq 1 "$rounds"); do
    for run in "${runs[@]}"; do
        # shellcheck disable=SC2086 # "SERVER MODE": two words
        run_mode $run "$round"
    done
done
run_seconds=$((SECONDS - run_start))

echo
echo "wrk -t$threads -c$connections -d$duration on /, $slow_requests × /slow?ms=200 (50 ms deadline); build ${build_seconds}s, runs ${run_seconds}s; load average $(cut -d' ' -f1-3 /proc/loadavg):"
echo
echo "| server | timeouts | requests/s | p99 latency | server CPU per request | RSS after run | peak RSS | timeouts fired | slow requests sent | slow answered 504 | slowest 504 | loop timers fired | idle timeouts fired | exit |"
echo "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
printf '%s\n' "${rows[@]}"

if [ "$rounds" -gt 1 ]; then
    echo
    echo "Medians of $rounds rounds:"
    echo
    echo "| server | timeouts | requests/s | p99 latency | server CPU per request | RSS after run | peak RSS |"
    echo "| --- | --- | ---: | ---: | ---: | ---: | ---: |"
    for run in "${runs[@]}"; do
        # shellcheck disable=SC2086 # "SERVER MODE": two words
        set -- $run
        awk -v server="$1" -v mode="$2" '
            function median(values, n,    i, j, t) {
                for (i = 2; i <= n; i++) for (j = i; j > 1 && values[j - 1] > values[j]; j--) {
                    t = values[j]; values[j] = values[j - 1]; values[j - 1] = t
                }
                return n % 2 ? values[(n + 1) / 2] : (values[n / 2] + values[n / 2 + 1]) / 2
            }
            $1 == server && $2 == mode { n++; rps[n] = $3; p99[n] = $4; rss[n] = $5; hwm[n] = $6; cpu[n] = $7 }
            END {
                printf "| %s | %s | %.0f | %.2f ms | %.1f µs | %.1f MiB | %.1f MiB |\n", server, mode,
                    median(rps, n), median(p99, n), median(cpu, n), median(rss, n) / 1024, median(hwm, n) / 1024
            }' "$summary"
    done
fi

if [ ${#failures[@]} -ne 0 ]; then
    echo >&2
    printf 'FAILED: %s\n' "${failures[@]}" >&2
    exit 1
fi
echo
echo "OK: every slow request timed out (504) and was logged (TimeoutServer: with its trace id), no fast one timed out; every server stopped cleanly."
