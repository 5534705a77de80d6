#!/usr/bin/env python3
"""Counts the tests that hold a cooperative-pool thread while they wait (STANDARDS: a test waits
with `await`; a test that must block does so on a thread it made).

    scripts/test-waits.py [--check] [--verbose] [Tests]

A line *blocks* when it calls a blocking primitive (a semaphore or `Recorder.wait`, a sleep, a
synchronous `shutdown()`, `concurrentPerform`, ...) or a function of `Tests/` that blocks, without
an `await` before the call on that line. Lines inside a closure handed to another thread (a
`Thread`, a scheduled action, a Dispatch block, an exit test's child) do not count: they block a
thread the test made or the scheduler's own. Which functions block is found to a fixed point, so a
test calling a blocking helper blocks.

Prints the number of `@Test` functions, the synchronous ones that block, the asynchronous ones
that block (a pool thread either way), and the semaphore and sleep calls in `Tests/`. With
`--check`, exits 1 when any test function blocks.

With `--real-time`, lists instead every test that waits in real time, with how: a polling wait
(`eventually`, a recorder's or a task's wait: a budget of this task's runnable time), a sentinel
timer (`letTimePass`), a timeout chosen by the test, `Task.sleep`, a thread put to sleep, a spin
on the clock, `asyncAfter`; in its own body, in a closure it hands to another thread, or in a
helper of `Tests/` it calls (the polling helpers themselves count as their kind). CONTRIBUTING.md
("How tests wait") says why each kind cannot fail on a loaded machine.

It reads the source, it does not compile it: a heuristic, good for the code in this repository.
"""
import os
import re
import sys

PRIMITIVES = [
    r"\.wait\(",  # DispatchSemaphore, DispatchGroup, Recorder.wait
    r"(?<![.\w])u?sleep\(",
    r"Thread\.sleep",
    r"\.shutdown\(\)",  # LoopScheduler.shutdown() joins the loop thread; awaited, it suspends
    r"concurrentPerform",
    r"waitUntilFinished\(",
    r"\.waitUntilClosed\(\)",  # LoopLifecycle's blocks; the schedulers' is async and awaited
    r"LoopScheduler\.run\(",
    r"\buv_run\b",
]
# Closures whose body runs on another thread than the test's.
OFF_THREAD = re.compile(
    r"(Thread\b[^{]*$|detachNewThread|onOwnThread|onThread|\.schedule\w*\b[^{]*$|scheduleRecursive|"
    r"\.(async|asyncAfter|sync)\b[^{]*$|processExitsWith|DispatchQueue[^{]*$|HostLoop\.start|"
    r"LoopScheduler\.run|\brun\(name:)"
)
FUNC = re.compile(r"\bfunc\s+(`?[\w]+`?)")
SEMAPHORE_OR_SLEEP = re.compile(r"DispatchSemaphore\(|(?<![.\w])u?sleep\(|Thread\.sleep")


def clean(line, state):
    """The line without comments and string literals (multi-line strings tracked in `state`)."""
    out = []
    i = 0
    while i < len(line):
        if state["multiline"]:
            end = line.find('"""', i)
            if end < 0:
                return "".join(out)
            state["multiline"] = False
            i = end + 3
            continue
        if line.startswith("//", i):
            break
        if line.startswith('"""', i):
            state["multiline"] = True
            i += 3
            continue
        if line[i] == '"':
            i += 1
            depth = 0
            while i < len(line):
                if line[i] == "\\" and i + 1 < len(line) and line[i + 1] == "(":
                    depth += 1
                    i += 2
                    continue
                if depth and line[i] == ")":
                    depth -= 1
                elif line[i] == "\\":
                    i += 1
                elif line[i] == '"' and not depth:
                    break
                i += 1
            i += 1
            out.append('""')
            continue
        out.append(line[i])
        i += 1
    return "".join(out)


class Func:
    def __init__(self, name, path, line, is_test, is_async):
        self.name, self.path, self.line = name, path, line
        self.is_test, self.is_async = is_test, is_async
        self.lines = []  # (line number, cleaned text) run on the function's own thread
        self.all_lines = []  # every line of its body, closures run elsewhere included
        self.marked = False  # `// test-waits: blocks` above it: blocking by design


def parse(path):
    funcs = []
    state = {"multiline": False}
    stack = []  # frames: ("func", Func) | ("off", None) | ("plain", None)
    pending = None  # [name, line, is_test, signature]
    saw_test = False
    marked = False
    with open(path, encoding="utf-8") as handle:
        for number, raw in enumerate(handle, 1):
            text = clean(raw.rstrip("\n"), state)
            if "test-waits: blocks" in raw:
                marked = True
            if "@Test" in text:
                saw_test = True
            match = FUNC.search(text)
            if match and pending is None:
                pending = [match.group(1), number, saw_test, ""]
                saw_test = False
            segment_start = 0

            def attribute(segment):
                owner = next((frame for frame in reversed(stack) if frame[0] != "plain"), None)
                if owner and owner[0] == "func" and segment.strip():
                    owner[1].lines.append((number, segment))
                enclosing = next((frame for frame in reversed(stack) if frame[0] == "func"), None)
                if enclosing and segment.strip():
                    enclosing[1].all_lines.append((number, segment))

            for index, char in enumerate(text):
                if char not in "{}":
                    continue
                before = text[segment_start:index]
                attribute(before)
                if char == "{":
                    if pending is not None:
                        pending[3] += before
                        func = Func(pending[0], path, pending[1], pending[2], "async" in pending[3].split("->")[0])
                        func.marked, marked = marked, False
                        funcs.append(func)
                        stack.append(("func", func))
                        pending = None
                    elif OFF_THREAD.search(before):
                        stack.append(("off", None))
                    else:
                        stack.append(("plain", None))
                elif stack:
                    stack.pop()
                segment_start = index + 1
            attribute(text[segment_start:])
            if pending is not None:
                pending[3] += text[segment_start:] + " "
    return funcs


def scope(path):
    """Helpers are seen by their own test target, and every target sees the shared support."""
    parts = path.split(os.sep)
    return parts[1] if len(parts) > 2 else ""


SHARED = "LoopSchedulingTestSupport"


def blocking_lines(func, patterns):
    """`patterns`: (regex, scope, awaited too) — an async helper that blocks holds the thread of
    whoever awaits it."""
    hits = []
    here = scope(func.path)
    for number, text in func.lines:
        for pattern, where, awaited in patterns:
            if where not in ("", here, SHARED):
                continue
            match = next((m for m in re.finditer(pattern, text) if awaited or "await" not in text[: m.start()]), None)
            if match:
                hits.append((number, text.strip()))
                break
    return hits


# How a test waits in real time (for --real-time), each kind once per test.
REAL_TIME = [
    ("polls", r"\beventually\b|\.wait\(for:|\.wait\(timeout:|\brunTask\("),
    ("sentinel timer", r"\bletTimePass\("),
    ("chosen timeout", r"\btimeout: \."),
    ("Task.sleep", r"\bTask\.sleep\("),
    ("thread sleeps", r"(?<![.\w])u?sleep\(|Thread\.sleep"),
    ("spins on the clock", r"while Nanoseconds\.monotonicNow\(\) <|\bbusyWait\("),
    ("asyncAfter", r"\.asyncAfter\("),
]
# The shared waiting helpers: each counts as its own kind, not as what it does inside.
WAITING_HELPERS = {"eventually", "wait", "letTimePass", "runTask", "startTask"}


def real_time(funcs):
    """Each @Test function that waits in real time, with the kinds of its waits."""
    kinds = {}
    for func in funcs:
        found = {label for label, pattern in REAL_TIME for _, text in func.all_lines if re.search(pattern, text)}
        kinds[func] = found
    helpers = [func for func in funcs if not func.is_test and func.name not in WAITING_HELPERS]
    changed = True
    while changed:
        changed = False
        for func in funcs:
            called = {name for _, text in func.all_lines for name in re.findall(r"(?<![\w])(\w+)\(", text)}
            for helper in helpers:
                if helper is func or helper.name not in called:
                    continue
                if scope(helper.path) not in ("", scope(func.path), SHARED):
                    continue
                if not kinds[helper] <= kinds[func]:
                    kinds[func] |= kinds[helper]
                    changed = True
    return [(func, sorted(kinds[func])) for func in funcs if func.is_test and kinds[func]]


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    root = args[0] if args else "Tests"
    files = sorted(
        os.path.join(directory, name)
        for directory, _, names in os.walk(root)
        for name in names
        if name.endswith(".swift")
    )
    funcs = [func for path in files for func in parse(path)]
    if "--real-time" in sys.argv:
        listed = real_time(funcs)
        for func, found in listed:
            print(f"{func.path}:{func.line} {func.name}: {', '.join(found)}")
        print(f"{len(listed)} of {sum(1 for func in funcs if func.is_test)} @Test functions wait in real time")
        return
    patterns = [(pattern, "", False) for pattern in PRIMITIVES]
    while True:
        blocking = [func for func in funcs if blocking_lines(func, patterns)]
        known = {(p, w, a) for p, w, a in patterns}
        new = []
        for func in blocking:
            if func.is_test or func.marked:
                continue
            entry = (rf"(?<![\w]){re.escape(func.name)}\(", scope(func.path), func.is_async)
            if entry not in known:
                known.add(entry)
                new.append(entry)
        if not new:
            break
        patterns += new
    tests = [func for func in funcs if func.is_test]
    sync_blocking = [func for func in tests if func in blocking and not func.is_async]
    async_blocking = [func for func in funcs if func in blocking and func.is_async]
    marked = [func for func in funcs if func.marked]
    calls = 0
    state = {"multiline": False}
    for path in files:
        with open(path, encoding="utf-8") as handle:
            for raw in handle:
                calls += len(SEMAPHORE_OR_SLEEP.findall(clean(raw, state)))
    print(f"@Test functions: {len(tests)}")
    print(f"synchronous @Test functions that block: {len(sync_blocking)}")
    print(f"async @Test functions that block: {sum(1 for func in async_blocking if func.is_test)}")
    print(f"async helpers that block: {sum(1 for func in async_blocking if not func.is_test)}")
    print(f"helpers marked blocking by design: {len(marked)}")
    print(f"semaphores made and sleep/usleep/Thread.sleep calls in {root}/: {calls}")
    if "--verbose" in sys.argv:
        for func in sync_blocking + async_blocking:
            kind = "async" if func.is_async else "sync"
            first = blocking_lines(func, patterns)[0]
            print(f"  {func.path}:{func.line} {kind} {func.name}: line {first[0]}: {first[1]}")
    if "--check" in sys.argv and (sync_blocking or async_blocking):
        sys.exit(1)


if __name__ == "__main__":
    main()
