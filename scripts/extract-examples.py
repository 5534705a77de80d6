#!/usr/bin/env python3
"""The Swift examples of README.md and the DocC articles, as a package outside this one.

Used by scripts/check-examples.sh (`make examples`); the marker convention is described in
Tests/ExamplesConsumer/README.md. Two commands:

  extract-examples.py generate --root ROOT --out CONSUMER [--only core|traits|all]
      Reads README.md and Sources/*/*.docc/**/*.md, and writes CONSUMER: a package whose only
      dependency on ROOT is a path dependency (its identity the folder's name, as a user's
      `.package(url:)` line would give it: `package: "<basename of ROOT>"`), with
        Examples            every fragment and declarations block without a trait, + Stubs.swift
        Examples_T1_T2      the same for the blocks of one set of traits (one target per set)
        Program_<doc>_<line>  one executable per program block (main.swift), no stubs
      A fragment or declarations block is compiled with what its document tells a reader to import
      (`document_imports`: the README's first example's imports, an article's own module) and the
      imports it shows, in a file of its own, with MemberImportVisibility (SE-0444) on every
      target, so no block compiles on another block's imports.
      Each generated file carries `#sourceLocation(file: "README.md", line: N)`, so the compiler,
      and the runtime's assertion messages, name the documentation's own lines. A file is
      rewritten only when its text changes, so a second run is an incremental build. Writes
      CONSUMER/examples.json (the blocks, and the problems found without compiling: a bad
      marker, `@testable` or `@_spi`, an integration imported without its trait, an unmarked
      Package.swift excerpt), CONSUMER/targets.txt and CONSUMER/counts.txt (for the script).

  extract-examples.py report --out CONSUMER --log BUILD_LOG [--log ...]
      Prints those problems and, per failing block, the file, the block's line, and the
      compiler's errors (and its warnings that count) at the documentation's lines, with a note
      when a name the compiler cannot find is `package` or `@_spi` here. Exits 1 if any block
      failed. Warnings: a declarations block fails on any warning (like the programs,
      which are compiled with -warnings-as-errors); a fragment fails on any warning except the
      unused-value family ("never used", "never mutated", "is unused"), since a fragment's
      `let timeout = ...` is often shown without its later use.

Python 3.11, standard library only.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path

# The integrations, each behind its trait: the consumer's products, from this package and from
# the integration's own packages (a user imports those too: `import OpenCombine`, `Logger`).
TRAITS: dict[str, dict] = {
    "OpenCombine": {
        "ours": ["SchedulingCombine"],
        "theirs": [("OpenCombine", "OpenCombine")],
    },
    "ServiceLifecycle": {
        "ours": ["SchedulingServiceLifecycle"],
        "theirs": [
            ("ServiceLifecycle", "swift-service-lifecycle"),
            ("UnixSignals", "swift-service-lifecycle"),
            ("Logging", "swift-log"),
        ],
    },
    "Metrics": {
        "ours": ["LoopSchedulingMetrics"],
        "theirs": [("CoreMetrics", "swift-metrics"), ("Metrics", "swift-metrics")],
    },
    "Tracing": {
        "ours": ["SchedulingTracing"],
        "theirs": [("Tracing", "swift-distributed-tracing"), ("Instrumentation", "swift-distributed-tracing")],
    },
    "NIO": {
        "ours": ["SchedulingNIO"],
        "theirs": [
            ("NIOCore", "swift-nio"),
            ("NIOPosix", "swift-nio"),
            ("NIOEmbedded", "swift-nio"),
            ("NIOHTTP1", "swift-nio"),
        ],
    },
    # Not a trait of this package: a package a user's tests add beside it (`with=AsyncAlgorithms`),
    # for the blocks that test swift-async-algorithms' operators on virtual time.
    "AsyncAlgorithms": {
        "ours": [],
        "theirs": [("AsyncAlgorithms", "swift-async-algorithms")],
        "package_trait": False,
    },
}


def is_package_trait(name: str) -> bool:
    return TRAITS[name].get("package_trait", True)


# A module a block imports -> the trait it needs (so a missing marker is named, not left to
# "no such module").
MODULE_TRAIT = {
    "SchedulingCombine": "OpenCombine",
    "OpenCombine": "OpenCombine",
    "OpenCombineDispatch": "OpenCombine",
    "OpenCombineFoundation": "OpenCombine",
    "SchedulingServiceLifecycle": "ServiceLifecycle",
    "ServiceLifecycle": "ServiceLifecycle",
    "UnixSignals": "ServiceLifecycle",
    "Logging": "ServiceLifecycle",
    "LoopSchedulingMetrics": "Metrics",
    "CoreMetrics": "Metrics",
    "Metrics": "Metrics",
    "SchedulingTracing": "Tracing",
    "Tracing": "Tracing",
    "Instrumentation": "Tracing",
    "ServiceContextModule": "Tracing",
    "SchedulingNIO": "NIO",
    "NIOCore": "NIO",
    "NIOPosix": "NIO",
    "NIOEmbedded": "NIO",
    "NIOHTTP1": "NIO",
    "AsyncAlgorithms": "AsyncAlgorithms",
}
WARNINGS_AS_ERRORS = '.unsafeFlags(["-warnings-as-errors"])'
# SE-0444: without it, a member declared in an extension in module M is visible in every file of a
# module once one file imports M, so a block could call what only another block's import brought in.
MEMBER_IMPORT_VISIBILITY = '.enableUpcomingFeature("MemberImportVisibility")'
KINDS = ("fragment", "declarations", "program", "skip")

MARKER = re.compile(r"^\s*<!--\s*example:(?P<body>.*?)-->\s*$")
MARKER_LOOSE = re.compile(r"<!--\s*example\b", re.IGNORECASE)
FENCE_OPEN = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})(?P<info>.*)$")
IMPORT = re.compile(
    r"^\s*(?:@[\w]+(?:\([^)]*\))?\s+)*import\s+(?:(?:typealias|struct|class|enum|protocol|let|var|func)\s+)?"
    r"(?P<module>[A-Za-z_]\w*)(?:\.[\w.]+)?\s*(?://.*)?$"
)
# "Unused" warnings: not failures in a fragment.
UNUSED_WARNING = re.compile(r"never used|never mutated|never read|is unused|was defined but never used")
AWAITS = re.compile(r"\bawait\b|\basync\s+let\b")
DIAGNOSTIC = re.compile(r"^(?P<path>[^\s:][^:]*):(?P<line>\d+):(?:(?P<col>\d+):)? (?P<sev>error|warning): (?P<msg>.*)$")


@dataclass
class Block:
    doc: str  # path relative to the root, e.g. README.md
    line: int  # the opening fence's line (1-based)
    indent: int  # columns removed from each line (a fence inside a list)
    kind: str
    traits: list[str]
    lines: list[str]  # the code, de-indented
    marker: str  # the marker's text ("" when none)
    target: str = ""
    file: str = ""  # generated file, relative to the consumer
    problems: list[str] = field(default_factory=list)
    # What the block's document tells its reader to import (see `document_imports`): the imports a
    # fragment or declarations block gets without showing them. Empty for a program.
    document_imports: list[str] = field(default_factory=list)

    @property
    def label(self) -> str:
        return f"{self.doc}:{self.line}"

    @property
    def first_code_line(self) -> int:
        return self.line + 1

    @property
    def last_code_line(self) -> int:
        return self.line + len(self.lines)


def doc_stem(doc: str) -> str:
    """README.md -> README; Sources/Scheduling/Scheduling.docc/Concurrency.md -> Scheduling_Concurrency."""
    p = Path(doc)
    parts = p.parts
    if len(parts) >= 3 and parts[0] == "Sources":
        stem = f"{parts[1]}_{'_'.join(Path(*parts[3:]).with_suffix('').parts)}"
    else:
        stem = str(p.with_suffix(""))
    return re.sub(r"\W", "_", stem)


def documents(root: Path) -> list[str]:
    docs = ["README.md"] if (root / "README.md").is_file() else []
    docs += sorted(str(p.relative_to(root)) for p in root.glob("Sources/*/*.docc/**/*.md"))
    return docs


def shown_imports(block: Block) -> list[str]:
    """The `import` lines a block shows, as written (`import LoopScheduling`)."""
    return [line.strip() for line in block.lines if IMPORT.match(line)]


def document_imports(doc: str, blocks: list[Block]) -> list[str]:
    """What a document tells its reader to import, as `import` lines: its blocks get these without
    showing them, and a block that needs more shows its own.

    A DocC article is read as the documentation of its catalog's module (Sources/M/M.docc/...):
    `import M`. Any other document (README.md) is read from its first compiled block, the example
    a reader copies first: that block's imports (the README's `import LoopScheduling`).
    """
    parts = Path(doc).parts
    if len(parts) >= 3 and parts[0] == "Sources" and parts[2] == f"{parts[1]}.docc":
        return [f"import {parts[1]}"]
    first = next((b for b in blocks if b.kind != "skip"), None)
    return shown_imports(first) if first else []


def parse_marker(body: str) -> tuple[str, list[str], list[str]]:
    """`declarations trait=Tracing,Metrics` -> ("declarations", ["Metrics", "Tracing"], problems)."""
    kind, traits, problems = "", [], []
    for word in body.split():
        if word.startswith(("trait=", "with=")):
            key, _, names = word.partition("=")
            known = [t for t in TRAITS if is_package_trait(t) == (key == "trait")]
            for name in filter(None, names.split(",")):
                if name not in known:
                    problems.append(f"unknown {key} '{name}' (known: {', '.join(known)})")
                elif name not in traits:
                    traits.append(name)
        elif word in KINDS:
            if kind and kind != word:
                problems.append(f"two kinds in one marker: '{kind}' and '{word}'")
            kind = word
        else:
            problems.append(
                f"unknown word '{word}' in the marker (known: declarations, program, skip, trait=NAME, with=PACKAGE)"
            )
    kind = kind or "fragment"
    if kind == "skip" and traits:
        problems.append("'skip' takes no trait")
    return kind, sorted(traits), problems


def extract(root: Path, doc: str) -> tuple[list[Block], list[str]]:
    """The ```swift blocks of one document, and the problems with its markers."""
    text = (root / doc).read_text(encoding="utf-8").splitlines()
    blocks: list[Block] = []
    problems: list[str] = []
    used_markers: set[int] = set()
    i = 0
    while i < len(text):
        m = FENCE_OPEN.match(text[i])
        if not m or (m.group("fence")[0] == "`" and "`" in m.group("info")):
            i += 1
            continue
        indent, fence, info = m.group("indent"), m.group("fence"), m.group("info").strip()
        language = info.split()[0].lower() if info else ""
        close = re.compile(r"^[ \t]*" + re.escape(fence[0]) + "{" + str(len(fence)) + r",}[ \t]*$")
        start = i
        i += 1
        body: list[str] = []
        while i < len(text) and not close.match(text[i]):
            line = text[i]
            # Remove the fence's indentation (CommonMark: up to that many columns of spaces).
            strip = 0
            while strip < len(indent) and strip < len(line) and line[strip] in " \t":
                strip += 1
            body.append(line[strip:])
            i += 1
        if i >= len(text):
            problems.append(f"{doc}:{start + 1}: the code block opened here is never closed")
        i += 1  # past the closing fence
        if language != "swift":
            continue
        marker_text, kind, traits, marker_problems = "", "fragment", [], []
        if start > 0:
            mm = MARKER.match(text[start - 1])
            if mm:
                used_markers.add(start - 1)
                marker_text = text[start - 1].strip()
                kind, traits, marker_problems = parse_marker(mm.group("body"))
        block = Block(doc, start + 1, len(indent), kind, traits, body, marker_text)
        block.problems += [f"{block.label}: {p}" for p in marker_problems]
        blocks.append(block)
    # A marker anywhere else (a blank line after it, or a fence of another language) is a mistake.
    for n, line in enumerate(text):
        if n not in used_markers and MARKER_LOOSE.search(line):
            following = text[n + 1].strip() if n + 1 < len(text) else ""
            if MARKER.match(line) is None:
                problems.append(f"{doc}:{n + 1}: malformed example marker: {line.strip()}")
            elif not following.startswith("```swift") and not following.startswith("~~~swift"):
                problems.append(
                    f"{doc}:{n + 1}: an example marker must be on the line right before a ```swift fence"
                )
    imports = document_imports(doc, blocks)
    for block in blocks:
        if block.kind != "program":
            block.document_imports = list(imports)
    return blocks, problems


def looks_like_manifest(lines: list[str]) -> bool:
    code = [l.strip() for l in lines if l.strip() and not l.strip().startswith("//")]
    if any("swift-tools-version" in l for l in lines):
        return True
    if not code:
        return False
    return (
        code[0].startswith((".package(", ".product(", ".target(", "dependencies:", "targets:", "products:"))
        or any(l.startswith("let package = Package(") for l in code)
    )


def marker_words(names: list[str]) -> str:
    """The marker words for a set of traits and packages: `trait=A,B with=C`."""
    words = []
    for key, wanted in (("trait", True), ("with", False)):
        chosen = sorted(n for n in names if is_package_trait(n) == wanted)
        if chosen:
            words.append(f"{key}={','.join(chosen)}")
    return " ".join(words)


def check_block(block: Block) -> None:
    """What can be said without the compiler."""
    if block.kind == "skip":
        return
    missing: dict[str, list[str]] = {}  # trait -> the modules imported without it
    for line in block.document_imports:
        module = IMPORT.match(line).group("module")
        needed = MODULE_TRAIT.get(module)
        if needed and needed not in block.traits:
            block.problems.append(
                f"{block.label}: its document's examples import {module} (the module whose documentation "
                f"it is), which needs the trait {needed}: mark the block "
                f"`<!-- example: {'' if block.kind == 'fragment' else block.kind + ' '}"
                f"{marker_words(block.traits + [needed])} -->`"
            )
    for n, line in enumerate(block.lines):
        doc_line = block.first_code_line + n
        if re.search(r"@testable\b", line) or re.search(r"@_spi\s*\(", line):
            block.problems.append(
                f"{block.doc}:{doc_line}: uses @testable or @_spi: an example shows the public API only"
            )
        m = IMPORT.match(line)
        if m:
            needed = MODULE_TRAIT.get(m.group("module"))
            if needed and needed not in block.traits:
                missing.setdefault(needed, []).append(m.group("module"))
    if missing:
        modules = [m for ms in missing.values() for m in ms]
        kind = "" if block.kind == "fragment" else block.kind + " "
        block.problems.append(
            f"{block.label}: imports {', '.join(modules)}, which need{'s' if len(modules) == 1 else ''} "
            f"the trait{'s' if len(missing) > 1 else ''} {', '.join(sorted(missing))}: mark the block "
            f"`<!-- example: {kind}{marker_words(block.traits + list(missing))} -->`"
        )
    if block.kind in ("fragment", "declarations") and not block.marker and looks_like_manifest(block.lines):
        block.problems.append(
            f"{block.label}: looks like a Package.swift excerpt, which no Swift file can hold: "
            "mark it `<!-- example: skip -->`"
        )


def source_location(block: Block, line: int) -> str:
    return f'#sourceLocation(file: "{block.doc}", line: {line})'


def render(block: Block) -> str:
    header = f"// Generated by scripts/extract-examples.py from {block.label} ({block.kind}"
    header += f", traits {', '.join(block.traits)})" if block.traits else ")"
    header += ": edit the documentation, not this file.\n"
    loc = source_location(block, block.first_code_line)
    code = "\n".join(block.lines)
    if block.kind == "program":
        return f"{header}{loc}\n{code}\n#sourceLocation()\n"
    # What the document tells its reader to import, and nothing more: a block that needs another
    # module (Foundation for `Date`, Synchronization for `Mutex`) shows its import.
    header += f"// The imports of {block.doc}'s examples: {', '.join(block.document_imports) or 'none'}.\n"
    imports = list(block.document_imports)
    if block.kind == "declarations":
        return f"{header}" + "\n".join(imports) + f"\n\n{loc}\n{code}\n#sourceLocation()\n"
    # A fragment: its own imports go to the file's top (each replaced by an empty line, so the
    # lines keep their numbers), the rest is the body of a function of its own.
    body, hoisted = [], []
    for line in block.lines:
        if IMPORT.match(line):
            hoisted.append(line.strip())
            body.append("")
        else:
            body.append(line)
    text = imports + [h for h in hoisted if h not in imports]
    name = f"example_{doc_stem(block.doc)}_{block.line}"
    # `async` only if the fragment awaits: in an async function the compiler prefers a method's
    # async overload, so a fragment of synchronous code (`loop.shutdown()`) is compiled as a
    # reader would run it, in a synchronous function.
    code_only = "\n".join(re.sub(r"//.*", "", line) for line in body)
    effects = "async throws" if AWAITS.search(code_only) else "throws"
    return (
        f"{header}"
        + "\n".join(text)
        + f"\n\n// A fragment: a function of its own, never called; its unused values only warn.\n"
        + f"func {name}() {effects} {{\n{loc}\n"
        + "\n".join(body)
        + "\n#sourceLocation()\n}\n"
    )


def write_if_changed(path: Path, text: str) -> None:
    if path.is_file() and path.read_text(encoding="utf-8") == text:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def dependency_urls(root: Path) -> dict[str, tuple[str, str]]:
    """The root manifest's `.package(url:from:)` lines: identity -> (url, version)."""
    manifest = (root / "Package.swift").read_text(encoding="utf-8")
    found = {}
    for url, version in re.findall(r'\.package\(\s*url:\s*"([^"]+)"\s*,\s*from:\s*"([^"]+)"', manifest):
        name = url.rstrip("/").split("/")[-1]
        name = name[:-4] if name.endswith(".git") else name
        found[name] = (url, version)
    return found


def sources_signature(root: Path) -> str:
    """A digest of the names of the package's source files. SwiftPM plans a build again when a
    file appears in or leaves the root package's folders, but not a path dependency's: in the
    manifest, this makes a file added to (or removed from) this package a change of the consumer."""
    names = sorted(
        str(p.relative_to(root))
        for folder in ("Sources", "CLibUV")
        if (root / folder).is_dir()
        for p in (root / folder).rglob("*")
        if p.is_file()
    )
    return hashlib.sha256("\n".join(names).encode("utf-8")).hexdigest()[:16]


def swift_list(items: list[str]) -> str:
    return "[" + ", ".join(items) + "]"


def generate(root: Path, out: Path, only: str, template_dir: Path) -> int:
    identity = root.name
    all_blocks: list[Block] = []
    problems: list[str] = []
    for doc in documents(root):
        blocks, doc_problems = extract(root, doc)
        all_blocks += blocks
        if only != "traits":  # the traits step leaves them to the other step
            problems += doc_problems
    for block in all_blocks:
        check_block(block)

    def selected(block: Block) -> bool:
        if only == "core":
            return not block.traits
        if only == "traits":
            return bool(block.traits)
        return True

    blocks = [b for b in all_blocks if selected(b)]
    compiled = [b for b in blocks if b.kind != "skip" and not b.problems]

    # Targets.
    libraries: dict[str, list[str]] = {}  # target -> traits
    programs: dict[str, list[str]] = {}
    for block in compiled:
        stem = f"{doc_stem(block.doc)}_{block.line}"
        if block.kind == "program":
            block.target = f"Program_{stem}"
            block.file = f"Sources/{block.target}/main.swift"
            programs[block.target] = block.traits
        else:
            block.target = "Examples" + "".join(f"_{t}" for t in block.traits)
            block.file = f"Sources/{block.target}/{stem}.swift"
            libraries[block.target] = block.traits
    traits_used = sorted({t for b in compiled for t in b.traits})

    # The manifest.
    urls = dependency_urls(root)
    dependency = f'.package(path: "{os.path.relpath(root, out)}"'
    package_traits = [t for t in traits_used if is_package_trait(t)]
    dependency += f", traits: {swift_list([json.dumps(t) for t in package_traits])})" if package_traits else ")"
    dependencies = [dependency]
    for package in sorted({p for t in traits_used for _, p in TRAITS[t]["theirs"]}):
        if package not in urls:
            print(f"error: {root / 'Package.swift'} has no .package(url:from:) line for {package}", file=sys.stderr)
            return 2
        url, version = urls[package]
        dependencies.append(f'.package(url: "{url}", from: "{version}")')

    def products(traits: list[str]) -> list[str]:
        names = [f'.product(name: "{p}", package: "{identity}")' for p in ("Scheduling", "LoopScheduling")]
        for t in traits:
            names += [f'.product(name: "{p}", package: "{identity}")' for p in TRAITS[t]["ours"]]
            names += [f'.product(name: "{p}", package: "{pkg}")' for p, pkg in TRAITS[t]["theirs"]]
        return names

    def settings(extra: list[str]) -> str:
        return swift_list([".swiftLanguageMode(.v6)", MEMBER_IMPORT_VISIBILITY] + extra)

    targets = []
    for name, traits in sorted(libraries.items()):
        defines = [f'.define("EXAMPLES_TRAIT_{t}")' for t in traits]
        targets.append(
            f'        .target(\n            name: "{name}",\n'
            f"            dependencies: {swift_list(products(traits))},\n"
            f"            swiftSettings: {settings(defines)}\n        ),"
        )
    for name, traits in sorted(programs.items()):
        targets.append(
            f'        .executableTarget(\n            name: "{name}",\n'
            f"            dependencies: {swift_list(products(traits))},\n"
            f"            swiftSettings: {settings([WARNINGS_AS_ERRORS])}\n        ),"
        )
    manifest = (
        "// swift-tools-version:6.1\n"
        "// Generated by scripts/extract-examples.py: a package outside this repository that depends on it\n"
        "// as a user's does (a path dependency, so its identity is the checkout's folder name).\n"
        f"// The package's source files: {sources_signature(root)} (a file added or removed there changes\n"
        "// this line, so SwiftPM plans the build again: it does not notice it in a path dependency).\n"
        "import PackageDescription\n\n"
        "let package = Package(\n"
        '    name: "ExamplesConsumer",\n'
        f"    dependencies: [\n" + "".join(f"        {d},\n" for d in dependencies) + "    ],\n"
        "    targets: [\n" + "\n".join(targets) + "\n    ],\n"
        "    swiftLanguageModes: [.v6]\n"
        ")\n"
    )

    # The files: written only when changed; anything left from an earlier run is removed.
    out.mkdir(parents=True, exist_ok=True)
    wanted: dict[str, str] = {"Package.swift": manifest}
    stubs = (template_dir / "Stubs.swift").read_text(encoding="utf-8")
    for name in libraries:
        wanted[f"Sources/{name}/Stubs.swift"] = stubs
    for block in compiled:
        wanted[block.file] = render(block)
    for rel, text in wanted.items():
        write_if_changed(out / rel, text)
    sources = out / "Sources"
    if sources.is_dir():
        for path in sorted(sources.rglob("*"), reverse=True):
            rel = str(path.relative_to(out))
            if path.is_file() and rel not in wanted:
                path.unlink()
            elif path.is_dir() and not any(path.iterdir()):
                path.rmdir()

    # The problems found without the compiler.
    for block in blocks:
        problems += block.problems
    (out / "examples.json").write_text(
        json.dumps(
            {
                "root": str(root),
                "only": only,
                "problems": problems,
                "blocks": [asdict(b) for b in blocks],
            },
            indent=1,
        ),
        encoding="utf-8",
    )
    with open(out / "targets.txt", "w", encoding="utf-8") as f:
        for name in sorted(libraries):
            f.write(f"library {name}\n")
        for block in sorted((b for b in compiled if b.kind == "program"), key=lambda b: b.target):
            f.write(f"program {block.target} {block.label}\n")
    # For the summary line: "N blocks (F fragments, D declarations, P programs run, T trait)",
    # where F and D count the blocks without a trait and T the fragments and declarations with one.
    def count(kind: str, traits: bool) -> int:
        return sum(1 for b in compiled if b.kind == kind and bool(b.traits) == traits)

    with open(out / "counts.txt", "w", encoding="utf-8") as f:
        counts = [
            len(compiled),
            count("fragment", False),
            count("declarations", False),
            count("program", False) + count("program", True),
            count("fragment", True) + count("declarations", True),
            sum(1 for b in blocks if b.kind == "skip"),
            len(problems),
        ]
        f.write(" ".join(map(str, counts)) + "\n")
    return 0


_package_declarations: dict[str, str] | None = None
_public_modules: dict[str, set[str]] = {}  # a public name -> the modules of this package declaring it


def scan_declarations(root: Path) -> None:
    global _package_declarations
    if _package_declarations is not None:
        return
    _package_declarations = {}
    declaration = re.compile(
        r"^\s*(?P<spi>@_spi\([^)]*\)\s+)?(?:@\w+(?:\([^)]*\))?\s+)*(?P<access>package|public)?\s*"
        r"(?:(?:final|static|class|nonisolated|mutating|override|convenience|indirect|distributed)\s+)*"
        r"(?:class|struct|enum|actor|protocol|func|var|let|typealias)\s+(?P<name>\w+)",
        re.M,
    )
    for path in sorted((root / "Sources").rglob("*.swift")):
        module = path.relative_to(root / "Sources").parts[0]
        for d in declaration.finditer(path.read_text(encoding="utf-8", errors="replace")):
            if d.group("access") == "package" or d.group("spi"):
                kind = "`package`" if d.group("access") == "package" else "`@_spi`"
                _package_declarations.setdefault(d.group("name"), f"{kind} in {path.relative_to(root)}")
            elif d.group("access") == "public":
                _public_modules.setdefault(d.group("name"), set()).add(module)
    for name in _public_modules:  # a name that is also API somewhere: no hint rather than a wrong one
        _package_declarations.pop(name, None)


def package_hint(root: Path, message: str) -> str | None:
    """For "cannot find 'X'" or "has no member 'X'": where X is declared `package` or `@_spi`."""
    m = re.search(r"(?:cannot find (?:type )?|has no member )'(\w+)'", message)
    if not m:
        return None
    scan_declarations(root)
    where = _package_declarations.get(m.group(1))
    return f"'{m.group(1)}' is {where}: not API, a user cannot see it" if where else None


def import_hint(root: Path, block: Block, message: str) -> str | None:
    """For "cannot find 'X' in scope": the imports the block had, and the module of this package
    that declares X, if the block imports none of them."""
    m = re.search(r"cannot find (?:type )?'(\w+)' in scope", message)
    if not m:
        return None
    scan_declarations(root)
    imported = block.document_imports + [i for i in shown_imports(block) if i not in block.document_imports]
    modules = {IMPORT.match(i).group("module") for i in imported}
    seen = "this block imports " + (", ".join(i.removeprefix("import ") for i in imported) or "nothing")
    if block.document_imports:
        seen += f" ({', '.join(i.removeprefix('import ') for i in block.document_imports)}: what {block.doc} tells its reader to import)"
    declaring = sorted(_public_modules.get(m.group(1), set()) - modules)
    if declaring and not (_public_modules[m.group(1)] & modules):
        return f"'{m.group(1)}' is declared in {' and '.join(declaring)}; {seen}: show `import {declaring[0]}` in the block"
    return f"{seen}: a block that needs another module shows its `import`"


def report(out: Path, logs: list[Path]) -> int:
    data = json.loads((out / "examples.json").read_text(encoding="utf-8"))
    root = Path(data["root"])
    blocks = [Block(**b) for b in data["blocks"]]
    by_doc: dict[str, list[Block]] = {}
    for b in blocks:
        by_doc.setdefault(b.doc, []).append(b)

    def block_at(doc: str, line: int) -> Block | None:
        for b in by_doc.get(doc, []):
            if b.first_code_line <= line <= b.last_code_line:
                return b
        return None

    seen: set[tuple] = set()
    failures: dict[str, list[str]] = {}  # block label (or file) -> messages
    order: list[str] = []
    has_error: set[str] = set()
    others: list[str] = []  # diagnostics outside any block (a stub, the manifest, the package itself)
    stale: set[Path] = set()  # generated files to rewrite, so their warnings come back next run

    for log in logs:
        for raw in log.read_text(encoding="utf-8", errors="replace").splitlines():
            m = DIAGNOSTIC.match(raw.strip())
            if not m:
                continue
            key = (m.group("path"), m.group("line"), m.group("col"), m.group("sev"), m.group("msg"))
            if key in seen:
                continue
            seen.add(key)
            path, line, col, sev, msg = key
            line = int(line)
            rel = path
            if os.path.isabs(path):
                try:
                    rel = str(Path(path).resolve().relative_to(root))
                except ValueError:
                    rel = path
            block = block_at(rel, line)
            if block is None:
                in_consumer = str(Path(path).resolve()).startswith(str(out.resolve()))
                if sev == "error" or (sev == "warning" and in_consumer):
                    others.append(raw.strip())
                    if sev == "warning" and in_consumer:
                        stale.add(Path(path))
                continue
            if sev == "warning":
                if block.kind == "fragment" and UNUSED_WARNING.search(msg):
                    continue
                stale.add(out / block.file)
            column = int(col) + block.indent if col else None
            # The line as it was extracted (the document may have changed since).
            source = " " * block.indent + block.lines[line - block.first_code_line]
            where = f"{rel}:{line}:{column}" if column else f"{rel}:{line}"
            text = [f"  {where}: {sev}: {msg}", f"    {line:>5} | {source}"]
            if column:
                text.append(f"          | {' ' * (column - 1)}^")
            if sev == "error":
                has_error.add(block.label)
            hint = (package_hint(root, msg) or import_hint(root, block, msg)) if sev == "error" else None
            if hint:
                text.append(f"          note: {hint}")
            if block.label not in failures:
                failures[block.label] = []
                order.append(block.label)
            failures[block.label] += text

    # Everything that failed, in the order of the documents and their lines.
    position = {doc: n for n, doc in enumerate(dict.fromkeys(b.doc for b in blocks))}
    entries: list[tuple[int, int, list[str]]] = []
    for problem in data["problems"]:
        m = re.match(r"^([^:]+):(\d+):", problem)
        key = (position.get(m.group(1), len(position)), int(m.group(2))) if m else (len(position), 0)
        entries.append((*key, [f"FAIL {problem}"]))
    for label in order:
        b = next(b for b in blocks if b.label == label)
        kind = b.kind + (f", traits {','.join(b.traits)}" if b.traits else "")
        verdict = "does not compile" if label in has_error else "compiles with warnings, which count here"
        entries.append(
            (position[b.doc], b.line, [f"FAIL {label}: the {kind} block at line {b.line} of {b.doc} {verdict}:"] + failures[label])
        )
    for *_, text in sorted(entries, key=lambda e: (e[0], e[1])):
        print("\n".join(text))
    if others:
        print("FAIL outside the documentation's blocks (a stub, the generated package, or the package itself):")
        for o in others:
            print(f"  {o}")
    # A warning fails this run; the file is removed so that the next run compiles it again (an
    # incremental build would not repeat the warning) and fails again until it is fixed.
    for path in stale:
        if path.is_file():
            path.unlink()
    (out / "report.txt").write_text(f"{len(failures)} {len(data['problems'])} {len(others)}\n", encoding="utf-8")
    return 1 if failures or others or data["problems"] else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    g = sub.add_parser("generate")
    g.add_argument("--root", type=Path, required=True)
    g.add_argument("--out", type=Path, required=True)
    g.add_argument("--only", choices=("core", "traits", "all"), default="all")
    r = sub.add_parser("report")
    r.add_argument("--out", type=Path, required=True)
    r.add_argument("--log", type=Path, action="append", required=True)
    args = parser.parse_args()
    if args.command == "generate":
        root = args.root.resolve()
        return generate(root, args.out.resolve(), args.only, root / "Tests" / "ExamplesConsumer")
    return report(args.out.resolve(), args.log)


if __name__ == "__main__":
    sys.exit(main())
