#!/usr/bin/env bash
# `make docs`: the DocC documentation of every public module, with warnings as errors (so every
# symbol link and every article link resolves).
#
# SwiftPM dumps the public symbol graphs of the package's modules (with the same traits as the
# other make targets, so the integrations are in them, and the debug build `make test` made);
# then `docc convert` (from the toolchain: no plugin dependency, which a dependent would have to
# resolve) builds each module's archive from its catalog, Sources/MODULE/MODULE.docc, and its
# own symbol graphs into .build-docs/MODULE.doccarchive. A module's documentation links (double
# backticks) only to its own symbols; another module's symbols are named in code voice.
#
# Environment: SWIFT (swift), DOCC (docc, or `xcrun docc` where that is how it is found).
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
swift="${SWIFT:-swift}"
docc="${DOCC:-docc}"
out="$root/.build-docs"
modules=(Scheduling LoopScheduling SchedulingCombine SchedulingServiceLifecycle LoopSchedulingMetrics SchedulingTracing SchedulingNIO)
traits="OpenCombine,ServiceLifecycle,Metrics,Tracing,NIO,CommandLineTool"

cd "$root"
start=$SECONDS
rm -rf "$out"
mkdir -p "$out"
# The same flags as `make build`, so this reuses its build instead of planning a new one.
"$swift" package --traits "$traits" -Xswiftc -warnings-as-errors \
    dump-symbol-graph --minimum-access-level public --emit-extension-block-symbols >"$out/dump-symbol-graph.log" 2>&1 || {
    cat "$out/dump-symbol-graph.log" >&2
    exit 1
}
graphs="$(sed -n 's/^Files written to \(.*\)$/\1/p' "$out/dump-symbol-graph.log" | tail -n 1)"
[ -n "$graphs" ] && [ -d "$graphs" ] || { echo "error: no symbol graph folder in:" >&2; cat "$out/dump-symbol-graph.log" >&2; exit 1; }

failures=0
for module in "${modules[@]}"; do
    catalog="Sources/$module/$module.docc"
    [ -d "$catalog" ] || { echo "error: $module has no catalog ($catalog)" >&2; failures=$((failures + 1)); continue; }
    mkdir -p "$out/graphs/$module"
    cp "$graphs/$module.symbols.json" "$out/graphs/$module/"
    cp "$graphs/$module"@*.symbols.json "$out/graphs/$module/" 2>/dev/null || true
    if "$docc" convert "$catalog" \
        --additional-symbol-graph-dir "$out/graphs/$module" \
        --fallback-display-name "$module" \
        --fallback-bundle-identifier "swift-schedulers.$module" \
        --output-path "$out/$module.doccarchive" \
        --warnings-as-errors >"$out/$module.log" 2>&1; then
        echo "ok   $module -> .build-docs/$module.doccarchive"
    else
        echo "FAIL $module:" >&2
        grep -E "error|warning" "$out/$module.log" >&2 || cat "$out/$module.log" >&2
        failures=$((failures + 1))
    fi
done
echo "docs: $((${#modules[@]} - failures)) of ${#modules[@]} modules built without warnings ($((SECONDS - start)) s)"
[ "$failures" -eq 0 ]
