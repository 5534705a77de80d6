#!/usr/bin/env bash
# `make check-resolution`: what a package that depends on this one resolves, per product and trait.
#
# For each case, makes a consumer package in a temporary folder with a path dependency on this
# checkout (the same resolution as a `.package(url:from:)` line: traits and pruning do not depend
# on how the dependency is found), runs `swift package resolve`, and compares the packages it
# checked out (.build/checkouts) with the expected set, exactly. Resolution only: nothing is built.
#
# The promise (README, "Depending on it"): `Scheduling` and `LoopScheduling` with the default
# traits resolve no other package; enabling an integration's trait resolves that integration's
# packages and nothing more — never the command-line tool's, the tests' or the benchmarks'.
#
# Environment: SWIFT (swift).
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
swift="${SWIFT:-swift}"
work="$(mktemp -d "${TMPDIR:-/tmp}/check-resolution.XXXXXX")"
trap 'rm -rf "$work"' EXIT

# The dependency's identity is its folder's name (a path dependency).
identity="$(basename "$root")"
failures=0
checks=0
start=$SECONDS

# check NAME "PRODUCT ..." "TRAIT,..." "EXPECTED PACKAGE ..."
# TRAIT "-" means the plain line (no traits: argument, so the default traits).
check() {
    local name=$1 products=$2 traits=$3 expected=$4
    local dir="$work/$name"
    checks=$((checks + 1))
    mkdir -p "$dir/Sources/Consumer"
    local dependency=".package(path: \"$root\")"
    if [ "$traits" != "-" ]; then
        local list
        list="$(echo "$traits" | sed 's/\([^,][^,]*\)/"\1"/g; s/,/, /g')"
        dependency=".package(path: \"$root\", traits: [$list])"
    fi
    local product_list=""
    for product in $products; do
        product_list+=".product(name: \"$product\", package: \"$identity\"), "
    done
    cat >"$dir/Package.swift" <<MANIFEST
// swift-tools-version:6.1
import PackageDescription

let package = Package(
    name: "Consumer",
    dependencies: [$dependency],
    targets: [.target(name: "Consumer", dependencies: [$product_list])]
)
MANIFEST
    echo "// The consumer's only file." >"$dir/Sources/Consumer/Consumer.swift"
    if ! (cd "$dir" && "$swift" package resolve >"$dir/resolve.log" 2>&1); then
        echo "FAIL $name: swift package resolve failed:" >&2
        sed 's/^/    /' "$dir/resolve.log" >&2
        failures=$((failures + 1))
        return
    fi
    local got
    got="$(ls "$dir/.build/checkouts" 2>/dev/null | sort | tr '\n' ' ' | sed 's/ $//')"
    local want
    want="$(echo "$expected" | tr ' ' '\n' | sed '/^$/d' | sort | tr '\n' ' ' | sed 's/ $//')"
    local count
    count="$(echo "$got" | wc -w)"
    if [ "$got" = "$want" ]; then
        printf 'ok   %-22s traits %-18s %d package(s)%s\n' "$name" "$traits" "$count" "${got:+: $got}"
    else
        printf 'FAIL %-22s traits %-18s resolved [%s], expected [%s]\n' "$name" "$traits" "$got" "$want" >&2
        failures=$((failures + 1))
    fi
}

echo "Resolution of a consumer of $identity (path dependency on $root):"
check scheduling "Scheduling" "-" ""
check loop-scheduling "Scheduling LoopScheduling" "-" ""
check combine "SchedulingCombine" "OpenCombine" "OpenCombine"
check service-lifecycle "SchedulingServiceLifecycle" "ServiceLifecycle" \
    "swift-service-lifecycle swift-log swift-async-algorithms swift-collections"
check metrics "LoopSchedulingMetrics" "Metrics" "swift-metrics"
check tracing "SchedulingTracing" "Tracing" "swift-distributed-tracing"
check nio "SchedulingNIO" "NIO" "swift-nio swift-atomics swift-collections swift-system"
check nio-without-trait "Scheduling LoopScheduling SchedulingNIO" "-" ""
check every-integration "LoopScheduling SchedulingCombine SchedulingServiceLifecycle LoopSchedulingMetrics SchedulingTracing SchedulingNIO" \
    "OpenCombine,ServiceLifecycle,Metrics,Tracing,NIO" \
    "OpenCombine swift-service-lifecycle swift-log swift-async-algorithms swift-collections swift-metrics swift-distributed-tracing swift-nio swift-atomics swift-system"
check command-line-tool "LoopScheduling" "CommandLineTool" "swift-argument-parser swift-distributed-tracing"

echo "$((checks - failures)) passed, $failures failed ($((SECONDS - start)) s)"
[ "$failures" -eq 0 ]
