#!/usr/bin/env python3
"""Import cycles between the modules (files) of Rust crates.

    scripts/import-cycles.py crates/catalog [crates/engine ...]   # print cycles per crate
    scripts/import-cycles.py --check crates/catalog               # exit 1 if any crate has one

An edge a -> b is any `crate::b...` path in file a (in `use` lines and inline paths such as
`crate::registry()`), or `super::b`/`self::b`, resolved to the longest known module prefix; a
path to an item that lib.rs re-exports (`pub use m::{Item}`) is an edge to m. Comments and
everything after the first top-level `#[cfg(test)]` of a file are ignored: test code may use
the whole crate. A cycle is a strongly connected component of more than one module.
"""
from __future__ import annotations

import pathlib
import re
import sys

PATH = re.compile(r"\b(crate|super|self)((?:::[A-Za-z_][A-Za-z0-9_]*)+|::\{[^}]*\})")
GROUP = re.compile(r"\b(crate|super|self)::\{([^}]*)\}")


def module_of(src: pathlib.Path, f: pathlib.Path) -> tuple[str, ...]:
    parts = list(f.relative_to(src).with_suffix("").parts)
    if parts[-1] in ("mod", "lib"):
        parts.pop()
    return tuple(parts)


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
    mods = {module_of(src, f): f for f in files}
    reexport: dict[str, tuple[str, ...]] = {}
    lib = src / "lib.rs"
    if lib.is_file():
        for m in re.finditer(r"pub use ([a-z_][a-z0-9_:]*)::(\{[^}]*\}|[A-Za-z_][A-Za-z0-9_]*);", code_of(lib.read_text())):
            path = tuple(m.group(1).split("::"))
            for item in m.group(2).strip("{}").split(","):
                if item.strip():
                    reexport[item.strip()] = path
    edges: dict[tuple[str, ...], set[tuple[str, ...]]] = {m: set() for m in mods}

    def resolve(base: tuple[str, ...], rest: list[str]) -> tuple[str, ...] | None:
        for n in range(len(rest), 0, -1):
            cand = base + tuple(rest[:n])
            if cand in mods:
                return cand
        if not base and rest and rest[0] in reexport:
            return reexport[rest[0]]
        return None

    for m, f in mods.items():
        text = code_of(f.read_text())
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
