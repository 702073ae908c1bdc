"""scripts/ci/shared-deps.py's comparison on hand-written lock files and `cargo tree` output."""
import importlib.util
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("shared_deps", ROOT / "scripts" / "ci" / "shared-deps.py")
shared_deps = importlib.util.module_from_spec(spec)
spec.loader.exec_module(shared_deps)

ROOT_LOCK = """
[[package]]
name = "hashbrown"
version = "0.14.5"

[[package]]
name = "hashbrown"
version = "0.17.1"

[[package]]
name = "libc"
version = "0.2.191"
"""
PY_LOCK = """
[[package]]
name = "hashbrown"
version = "0.17.2"

[[package]]
name = "libc"
version = "0.2.191"

[[package]]
name = "pyo3"
version = "0.30.1"
"""
# `cargo tree --prefix none -f "{p}|{f}"`: a path package carries its path, a repeat ends in (*)
ROOT_TREE = """lwcbench-core v0.1.0 (/w/crates/core)|default
libc v0.2.191|default,extra_traits,std
libc v0.2.191|default,std
lwcbench-core v0.1.0 (/w/crates/core)|default (*)
"""
PY_TREE = """lwcbench-core v0.1.0 (/w/crates/core)|default
libc v0.2.191|default,std
pyo3 v0.30.1|abi3
"""


def test_a_newer_version_and_missing_features_are_reported():
    d = shared_deps.differences(ROOT_LOCK, PY_LOCK, shared_deps.parse_tree(ROOT_TREE),
                                shared_deps.parse_tree(PY_TREE))
    assert d == [
        "hashbrown: python/Cargo.lock has ['0.17.2'], Cargo.lock ['0.14.5', '0.17.1']",
        "libc v0.2.191: features ['default,std'] in the Python build, "
        "['default,extra_traits,std', 'default,std'] in the test build",
    ]


def test_equal_builds_and_python_only_packages_pass():
    tree = shared_deps.parse_tree(ROOT_TREE)
    assert tree["lwcbench-core v0.1.0"] == {"default"}, "the repeat marker (*) is not a feature set"
    pyo3_only = '\n[[package]]\nname = "pyo3"\nversion = "0.30.1"\n'
    assert shared_deps.differences(ROOT_LOCK, ROOT_LOCK + pyo3_only, tree, dict(tree, **{"pyo3 v0.30.1": {"abi3"}})) == []


def test_the_citest_profiles_are_compared_with_what_they_inherit():
    root = """
[profile.release]
debug = 1
codegen-units = 1
lto = "thin"
[profile.citest]
inherits = "release"
debug = 0
lto = false
codegen-units = 16
"""
    py = """
[profile.release]
codegen-units = 1
lto = "thin"
[profile.citest]
inherits = "release"
debug = 0
lto = false
codegen-units = 16
"""
    a, b = shared_deps.citest_profile(root), shared_deps.citest_profile(py)
    assert a == b == {"debug": 0, "codegen-units": 16, "lto": False}
    # python's release without debug = 1 but a citest that forgot debug = 0: debug differs
    c = shared_deps.citest_profile(py.replace("debug = 0\n", "").replace("codegen-units = 1\n", "codegen-units = 1\ndebug = 1\n", 1))
    assert c == {"debug": 1, "codegen-units": 16, "lto": False}
    assert shared_deps.differences("", "", {}, {}, a, c) == [
        "profile citest: codegen-units = 16, debug = 1, lto = False in python/Cargo.toml, "
        "codegen-units = 16, debug = 0, lto = False in Cargo.toml"
    ]


def test_host_only_sets_of_the_test_build_pass_and_target_differences_do_not():
    # The test build compiles libc twice (a proc macro's copy without extra_traits besides the
    # target's); the Python build compiles only the target's: shared.
    full = shared_deps.parse_tree("libc v0.2.191|default,extra_traits,std\nlibc v0.2.191|default,std\n")
    target = shared_deps.parse_tree("libc v0.2.191|default,extra_traits,std\n")
    py = shared_deps.parse_tree("libc v0.2.191|default,extra_traits,std\n")
    assert shared_deps.differences(ROOT_LOCK, ROOT_LOCK, full, py, root_target=target, py_target=py) == []
    # The Python build's target-side libc without extra_traits recompiles everything above it.
    py = shared_deps.parse_tree("libc v0.2.191|default,std\n")
    assert shared_deps.differences(ROOT_LOCK, ROOT_LOCK, full, py, root_target=target, py_target=py) == [
        "libc v0.2.191: features ['default,std'] in the Python build, "
        "['default,extra_traits,std'] in the test build (target side)"]
    # A host-side set only the Python build compiles is reported too.
    py_full = shared_deps.parse_tree("libc v0.2.191|default,extra_traits,std\nlibc v0.2.191|std\n")
    assert shared_deps.differences(ROOT_LOCK, ROOT_LOCK, full, py_full, root_target=target, py_target=target) == [
        "libc v0.2.191: features ['std'] in the Python build only "
        "(the test build has ['default,extra_traits,std', 'default,std'])"]
