"""scripts/ci/import-cycles.py on tiny hand-made crates whose cycles are known by construction."""
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "ci" / "import-cycles.py"


def crate(tmp: pathlib.Path, files: dict[str, str]) -> pathlib.Path:
    for rel, text in files.items():
        p = tmp / "src" / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return tmp


def run(path: pathlib.Path, check: bool = True) -> subprocess.CompletedProcess:
    args = [sys.executable, str(SCRIPT)] + (["--check"] if check else []) + [str(path)]
    return subprocess.run(args, capture_output=True, text=True)


def test_sibling_cycle_through_crate_paths(tmp_path):
    c = crate(tmp_path, {"lib.rs": "pub mod a;\npub mod b;\n", "a.rs": "use crate::b::B;\npub struct A;\n",
                         "b.rs": "pub struct B;\npub fn f() -> crate::a::A { crate::a::A }\n"})
    r = run(c)
    assert r.returncode == 1
    assert "1 import cycle(s)" in r.stdout and "a <-> b" in r.stdout


def test_parent_and_child_in_a_mod_rs_folder(tmp_path):
    # The parent calls its child, the child uses an item of its parent: a cycle.
    c = crate(tmp_path, {"lib.rs": "pub mod net;\n", "net/mod.rs": "mod udp;\npub fn g() { udp::f() }\npub const N: u8 = 1;\n",
                         "net/udp.rs": "pub fn f() { let _ = super::N; }\n"})
    r = run(c)
    assert r.returncode == 1 and "net <-> net::udp" in r.stdout


def test_parent_and_child_in_foo_rs_plus_folder(tmp_path):
    c = crate(tmp_path, {"lib.rs": "pub mod net;\n", "net.rs": "mod udp;\nuse udp::f;\npub const N: u8 = 1;\n",
                         "net/udp.rs": "pub fn f() { let _ = crate::net::N; }\n"})
    r = run(c)
    assert r.returncode == 1 and "net <-> net::udp" in r.stdout


def test_child_using_its_parent_alone_is_no_cycle(tmp_path):
    c = crate(tmp_path, {"lib.rs": "pub mod net;\n", "net/mod.rs": "pub mod udp;\npub const N: u8 = 1;\n",
                         "net/udp.rs": "pub fn f() { let _ = super::N; }\n"})
    r = run(c)
    assert r.returncode == 0 and "0 import cycle(s)" in r.stdout


def test_file_attached_with_path_is_the_declaring_modules_child(tmp_path):
    c = crate(tmp_path, {"main.rs": "mod cmd;\n", "cmd.rs": '#[path = "cmd_net.rs"]\nmod net;\npub struct Args;\nfn r() { net::go() }\n',
                         "cmd_net.rs": "pub fn go() { let _ = super::Args; }\n"})
    r = run(c)
    assert r.returncode == 1 and "cmd <-> cmd::net" in r.stdout


def test_test_code_and_comments_are_ignored(tmp_path):
    c = crate(tmp_path, {"lib.rs": "pub mod a;\npub mod b;\n", "a.rs": "pub fn f() { crate::b::g() }\n",
                         "b.rs": "// crate::a::f()\npub fn g() {}\n#[cfg(test)]\nmod tests { fn t() { crate::a::f() } }\n"})
    r = run(c)
    assert r.returncode == 0, r.stdout


def test_without_check_a_cycle_is_printed_not_failed(tmp_path):
    c = crate(tmp_path, {"lib.rs": "pub mod a;\npub mod b;\n", "a.rs": "use crate::b::B;\npub struct A;\n",
                         "b.rs": "use crate::a::A;\npub struct B;\n"})
    r = run(c, check=False)
    assert r.returncode == 0 and "a <-> b" in r.stdout


def test_reexport_from_a_child_is_a_facade_not_a_cycle(tmp_path):
    # The parent only re-exports its child's item; the child uses the parent's shared item.
    c = crate(tmp_path, {"lib.rs": "pub mod aes;\n", "aes/mod.rs": "mod make;\npub use make::make;\npub struct Kind;\n",
                         "aes/make.rs": "pub fn make() -> super::Kind { super::Kind }\n"})
    r = run(c)
    assert r.returncode == 0, r.stdout
