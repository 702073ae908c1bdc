#!/usr/bin/env python3
"""The Python package and the workspace's test build share their compiled dependencies.

scripts/setup.sh --test builds the PyO3 package (python/, its own workspace and lock file) in
the test build's target directory and profile, so `cargo test --workspace` reuses what it
compiled. Cargo reuses a compiled crate only when its version and features are the same in both
builds; one difference low in the graph (libc's features, a newer hashbrown) recompiles it and
every crate above it, about four minutes of CI. This checks both:

  * every package in python/Cargo.lock that the root Cargo.lock also has is at a version the
    root lock has (fix: `cargo update -p NAME --precise VERSION --manifest-path python/Cargo.toml`);
  * every shared package has, on the target side (no build scripts, no proc macros), the
    features `cargo tree` resolves for the root workspace's test build, and every feature set
    the Python build compiles on the host side is one the test build compiles (fix: the feature-alignment dependencies in python/Cargo.toml, or syn's in
    crates/catalog/Cargo.toml);
  * the two workspaces' `citest` profiles, with what they inherit from `release`, are equal
    (fix: the same keys in both Cargo.toml files).

usage: scripts/ci/shared-deps.py [--check]   (prints the differences; --check exits 1 on any)
"""
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def lock_versions(text):
    """{name: {version, ...}} from a Cargo.lock's [[package]] tables."""
    out, name = {}, None
    for line in text.splitlines():
        if line.startswith("name = "):
            name = line.split('"')[1]
        elif line.startswith("version = ") and name is not None:
            out.setdefault(name, set()).add(line.split('"')[1])
            name = None
    return out


def tree_features(args):
    """{"name vX.Y.Z": {"f1,f2", ...}} as `cargo tree` resolves them (one set per host/target)."""
    cmd = ["cargo", "tree", "--locked", "--prefix", "none", "--no-dedupe", "-f", "{p}|{f}", *args]
    r = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"error: {' '.join(cmd)}: {r.stderr.strip().splitlines()[-1:]}")
    return parse_tree(r.stdout)


def parse_tree(text):
    out = {}
    for line in text.splitlines():
        if "|" not in line:
            continue
        pkg, feats = line.split("|", 1)
        pkg = pkg.split(" (")[0].strip()  # drop "(/path)"
        feats = feats.strip().removesuffix("(*)").strip()  # "(*)": printed in full elsewhere
        out.setdefault(pkg, set()).add(feats)
    return out


def citest_profile(manifest_text):
    """The `citest` profile's settings with those it inherits from `release` (Cargo's own
    defaults are the same in both workspaces)."""
    profiles = tomllib.loads(manifest_text).get("profile", {})
    own = profiles.get("citest", {})
    inherited = profiles.get(own.get("inherits", ""), {})
    return {k: v for k, v in {**inherited, **own}.items() if k != "inherits"}


def settings(profile):
    return ", ".join(f"{k} = {v!r}" for k, v in sorted((profile or {}).items()))


def differences(root_lock, py_lock, root_tree, py_tree, root_profile=None, py_profile=None,
                root_target=None, py_target=None):
    diffs = []
    if root_profile != py_profile:
        diffs.append(f"profile citest: {settings(py_profile)} in python/Cargo.toml, "
                     f"{settings(root_profile)} in Cargo.toml")
    root_v, py_v = lock_versions(root_lock), lock_versions(py_lock)
    for name in sorted(py_v):
        if name in root_v and not py_v[name] <= root_v[name]:
            diffs.append(f"{name}: python/Cargo.lock has {sorted(py_v[name])}, Cargo.lock {sorted(root_v[name])}")
    if root_target is None:
        for pkg in sorted(py_tree):
            if pkg in root_tree and py_tree[pkg] != root_tree[pkg]:
                diffs.append(f"{pkg}: features {sorted(py_tree[pkg])} in the Python build, "
                             f"{sorted(root_tree[pkg])} in the test build")
        return diffs
    # With the target-side trees (no build scripts, no proc macros): those must be equal, since a
    # crate compiled with other features recompiles everything above it; on the host side (build
    # scripts, proc macros) the test build may compile more (the link's proc macros), so each of
    # the Python build's sets need only be one the test build compiles too.
    for pkg in sorted(py_target):
        if pkg in root_target and py_target[pkg] != root_target[pkg]:
            diffs.append(f"{pkg}: features {sorted(py_target[pkg])} in the Python build, "
                         f"{sorted(root_target[pkg])} in the test build (target side)")
    for pkg in sorted(py_tree):
        if pkg in root_tree and not py_tree[pkg] <= root_tree[pkg]:
            diffs.append(f"{pkg}: features {sorted(py_tree[pkg] - root_tree[pkg])} in the Python build only "
                         f"(the test build has {sorted(root_tree[pkg])})")
    return diffs


def main():
    check = "--check" in sys.argv[1:]
    diffs = differences((ROOT / "Cargo.lock").read_text(), (ROOT / "python/Cargo.lock").read_text(),
                        tree_features(["--workspace", "-e", "normal,build,dev"]),
                        tree_features(["--manifest-path", "python/Cargo.toml", "-e", "normal,build"]),
                        citest_profile((ROOT / "Cargo.toml").read_text()),
                        citest_profile((ROOT / "python/Cargo.toml").read_text()),
                        tree_features(["--workspace", "-e", "normal,dev,no-proc-macro"]),
                        tree_features(["--manifest-path", "python/Cargo.toml", "-e", "normal,no-proc-macro"]))
    for d in diffs:
        print(f"shared-deps: {d}", file=sys.stderr)
    if not diffs:
        print("shared-deps: the Python package's dependencies are the test build's (versions and features)")
    sys.exit(1 if diffs and check else 0)


if __name__ == "__main__":
    main()
