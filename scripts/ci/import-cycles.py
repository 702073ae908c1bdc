#!/usr/bin/env python3
"""Import cycles between the modules (files) of Rust crates.

    scripts/ci/import-cycles.py crates/catalog [crates/engine ...]   # print cycles per crate
    scripts/ci/import-cycles.py --check crates/catalog               # exit 1 if any crate has one

A module is a file: `lib.rs`/`main.rs` is the crate root, `foo.rs` and `foo/mod.rs` are `foo`,
`foo/bar.rs` is `foo::bar`, and a file attached with `#[path = "x.rs"] mod y;` is `y`. An edge
a -> b is any `crate::b...` path in file a (in `use` lines and inline paths such as
`crate::registry()`), `super::b`/`self::b`, or a path starting with the name of a child module
of a (`b::f()`, `use b::X`), resolved to the longest known module prefix; a path to an item that
a module re-exports from its child (`pub use m::{Item}`) is an edge to m, and the re-export is
no edge of the re-exporting module (a facade). Declaring a child (`mod b;`) is not
an edge. Comments and everything after the first top-level `#[cfg(test)]` of a file are ignored:
test code may use the whole crate. A cycle is a strongly connected component of more than one
module.
"""
from __future__ import annotations

import pathlib
import re
import sys

PATH = re.compile(r"\b(crate|super|self)((?:::[A-Za-z_][A-Za-z0-9_]*)+|::\{[^}]*\})")
GROUP = re.compile(r"\b(crate|super|self)::\{([^}]*)\}")


def module_of(src: pathlib.Path, f: pathlib.Path) -> tuple[str, ...]:
    parts = list(f.relative_to(src).with_suffix("").parts)
    if parts[-1] == "mod" or (len(parts) == 1 and parts[0] in ("lib", "main")):
        parts.pop()
    return tuple(parts)


ATTACH = re.compile(r'#\[path\s*=\s*"([^"]+)"\]\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+([A-Za-z_][A-Za-z0-9_]*)\s*;')
REEXPORT = re.compile(r"\bpub(?:\([a-z]+\))?\s+use\s+((?:self::)?[a-z_][A-Za-z0-9_:]*?)::(\{[^}]*\}|[A-Za-z_][A-Za-z0-9_]*(?:\s+as\s+[A-Za-z_][A-Za-z0-9_]*)?)\s*;")
CHILD = re.compile(r"(?<![A-Za-z0-9_:])([a-z_][A-Za-z0-9_]*)::")


def attached(src: pathlib.Path, files: list[pathlib.Path]) -> dict[pathlib.Path, tuple[str, ...]]:
    """Files attached with `#[path]`: their module is the declaring module's child `y`."""
    out = {}
    for f in files:
        for m in ATTACH.finditer(f.read_text()):
            target = (f.parent / m.group(1)).resolve()
            out[target] = module_of(src, f) + (m.group(2),)
    return out


def code_of(text: str) -> str:
    cut = re.search(r"^#\[cfg\(test\)\]", text, re.M)
    if cut:
        text = text[: cut.start()]
    lines = []
    for line in text.splitlines():
        line = re.sub(r'"(?:[^"\\]|\\.)*"', '""', line)  # string literals
        lines.append(line.split("//", 1)[0])
    return "\n".join(lines)


def graph(crate: pathlib.Path) -> dict[tuple[str, ...], set[tuple[str, ...]]]:
    src = crate / "src"
    files = sorted(p for p in src.rglob("*.rs") if "bin" not in p.relative_to(src).parts[:1])
    attach = attached(src, files)
    mods = {attach.get(f.resolve(), module_of(src, f)): f for f in files}
    # `pub use child::{Item}` in module m re-exports a child's item: a path to m::Item is an edge
    # to the child, and the re-export itself is no edge of m (it is m's facade, not its code).
    reexport: dict[tuple[str, ...], dict[str, tuple[str, ...]]] = {}
    texts: dict[tuple[str, ...], str] = {}
    for m, f in mods.items():
        text = code_of(f.read_text())

        def facade(u: re.Match, m: tuple[str, ...] = m) -> str:
            path = tuple(x for x in u.group(1).split("::") if x != "self")
            if not path or m + path[:1] not in mods:
                return u.group(0)
            target = m + path
            while target not in mods:
                target = target[:-1]
            for item in u.group(2).strip("{}").split(","):
                item = item.strip().split(" as ")[-1].strip()
                if item:
                    reexport.setdefault(m, {})[item] = target
            return ""

        texts[m] = REEXPORT.sub(facade, text)
    edges: dict[tuple[str, ...], set[tuple[str, ...]]] = {m: set() for m in mods}

    def resolve(base: tuple[str, ...], rest: list[str]) -> tuple[str, ...] | None:
        for n in range(len(rest), 0, -1):
            cand = base + tuple(rest[:n])
            if cand in mods:
                return cand
        if rest and rest[0] in reexport.get(base, {}):
            return reexport[base][rest[0]]
        return base if base in mods else None  # an item of `base` itself (`super::f`)

    for m, text in texts.items():
        # `crate::{a, b::c}` groups: expand to one path each
        paths = []
        for g in GROUP.finditer(text):
            for item in g.group(2).split(","):
                item = item.strip()
                if item:
                    paths.append((g.group(1), item.split("::")))
        for p in PATH.finditer(text):
            if p.group(2).startswith("::{"):
                continue
            paths.append((p.group(1), p.group(2).strip(":").split("::")))
        # a path starting with a child module's name: `child::f()`, `use child::X`
        for c in CHILD.finditer(text):
            if m + (c.group(1),) in mods and c.group(1) not in ("crate", "super", "self"):
                paths.append(("self", [c.group(1)]))
        for kind, rest in paths:
            rest = [r for r in rest if r]
            if kind == "crate":
                base: tuple[str, ...] = ()
            elif kind == "self":
                base = m  # `self::x` names a child of this module
            else:  # super: the parent of this module
                base = m[:-1]
                while rest and rest[0] == "super":
                    base, rest = base[:-1], rest[1:]
            t = resolve(base, rest)
            if t is not None and t != m and t != ():
                edges[m].add(t)
    return edges


def cycles(edges: dict[tuple[str, ...], set[tuple[str, ...]]]) -> list[list[tuple[str, ...]]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict = {}
    low: dict = {}
    stack: list = []
    on: set = set()
    out: list = []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def name(m: tuple[str, ...]) -> str:
    return "::".join(m) or "lib"


def main(argv: list[str]) -> int:
    check = "--check" in argv
    crates = [a for a in argv if a != "--check"]
    if not crates:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    bad = 0
    for c in crates:
        cs = cycles(graph(pathlib.Path(c)))
        print(f"{c}: {len(cs)} import cycle(s)")
        for comp in cs:
            print("  " + " <-> ".join(name(m) for m in comp))
        bad += len(cs)
    return 1 if check and bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
