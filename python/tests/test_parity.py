"""Python and the command line agree, verb by verb: the same rows from the same options (both
call the Rust application layer, crates/app). Timings differ between any two runs, so rows are
compared by what identifies them (group, protocol, size, count), and deterministic outputs
(choose, compare's verdict table, verify's checks) whole. Needs the CLI binary: $LWCBENCH_BIN,
else target/citest/lwcbench or target/release/lwcbench of this checkout."""
import csv
import json
import os
import shutil
import subprocess
import zlib
from pathlib import Path

import pytest

import lwcbench

ROOT = Path(__file__).resolve().parents[2]


def _binary():
    for p in (os.environ.get("LWCBENCH_BIN"), ROOT / "target/citest/lwcbench", ROOT / "target/release/lwcbench"):
        if p and Path(p).is_file():
            return str(p)
    return None


BIN = _binary()
pytestmark = pytest.mark.skipif(BIN is None, reason="no lwcbench binary (set LWCBENCH_BIN or build target/citest)")


def cli(*args, cwd=None):
    p = subprocess.run([BIN, *map(str, args)], capture_output=True, text=True, cwd=cwd, timeout=900)
    assert p.returncode == 0, p.stderr
    return p.stdout


def rows(path, key):
    with open(path, newline="", encoding="utf-8") as f:
        return sorted(tuple(r[k] for k in key) for r in csv.DictReader(f))


GROUP = ("cipher", "implementation", "scenario", "kiv", "size_bits", "payload", "n")


def test_run_rows(tmp_path):
    opts = dict(cipher="ChaCha20,Ascon-AEAD128", scenario="init,encrypt,keysetup", kiv="ss,rr", reps=4, warmup=1,
                seed=7)
    d = lwcbench.run(out=tmp_path / "py", **opts)
    cli("run", "--cipher", opts["cipher"], "--scenario", opts["scenario"], "--kiv", opts["kiv"], "-n", 4, "-w", 1,
        "--seed", 7, "-q", "-o", tmp_path / "cli")
    py_files = json.loads((Path(d) / "run.json").read_text())["files"]
    cli_files = json.loads((tmp_path / "cli/run.json").read_text())["files"]
    # both write report.html into the run's unit and list it in run.json
    assert py_files == cli_files and "report.html" in py_files
    assert (Path(d) / "report.html").is_file() and (tmp_path / "cli/report.html").is_file()
    assert rows(Path(d) / "summary.csv", GROUP) == rows(tmp_path / "cli/summary.csv", GROUP)
    assert len(rows(Path(d) / "summary.csv", GROUP)) > 4


CYCLE = ("cipher", "protocol", "message", "bytes", "measured", "path", "n")


def test_run_ics_latency_in_cycle_rows(tmp_path):
    # The in-cycle rows (GOOSE with root, Modbus/TCP always) come from the link crate, which the
    # engine cannot reach: Python gets them through the application layer, as the CLI does.
    opts = dict(preset="ics-latency", cipher="Ascon-AEAD128", reps=3, warmup=1, seed=3)
    d = Path(lwcbench.run(out=tmp_path / "py", **opts))
    cli("run", "--preset", "ics-latency", "--cipher", "Ascon-AEAD128", "-n", 3, "-w", 1, "--seed", 3, "-q",
        "-o", tmp_path / "cli")
    assert (d / "ics-cycle.csv").is_file(), sorted(p.name for p in d.iterdir())
    py_rows, cli_rows = rows(d / "ics-cycle.csv", CYCLE), rows(tmp_path / "cli/ics-cycle.csv", CYCLE)
    assert py_rows == cli_rows
    assert any(r[1] == "Modbus/TCP" or "modbus" in r[1].lower() for r in py_rows), py_rows
    py_notes = [n for n in json.loads((d / "run.json").read_text())["notes"] if "rows missing" in n]
    cli_notes = [n for n in json.loads((tmp_path / "cli/run.json").read_text())["notes"] if "rows missing" in n]
    assert py_notes == cli_notes


def test_choose_answer(tmp_path):
    a = lwcbench.choose("rp2040", "LoRa-SF9", "10m", payload=16, lifetime="5y")
    b = json.loads(cli("choose", "--board", "rp2040", "--radio", "LoRa-SF9", "--interval", "10m", "--payload", "16B",
                       "--lifetime", "5y", "--json", cwd=tmp_path))
    assert a == b


def test_compare_table(tmp_path):
    for name, seed in (("a", 1), ("b", 2)):
        lwcbench.run(cipher="ChaCha20", scenario="init,keystream", kiv="ss", sizes=[8, 1024], reps=15, warmup=0,
                     seed=seed, out=tmp_path / name, report=False)
    df = lwcbench.compare(tmp_path / "a", tmp_path / "b", margin=12.5, html=tmp_path / "py.html")
    text = cli("compare", tmp_path / "a", tmp_path / "b", "--margin", 12.5, "--html", tmp_path / "cli.html")
    assert text == df.attrs["text"] + f"wrote {tmp_path / 'cli.html'}\n"
    assert (tmp_path / "py.html").read_text() == (tmp_path / "cli.html").read_text()
    assert len(df) == 3 and set(df["verdict"]) <= {"B faster", "B slower", "no change"}


LINK = ("cipher", "sent", "stored", "rejected")


def test_link_session_small(tmp_path):
    r = lwcbench.link(cipher="Ascon-AEAD128", devices=2, messages=5, interval=0, out=tmp_path / "py")
    cli("link", "--cipher", "Ascon-AEAD128", "--devices", 2, "--messages", 5, "--interval", "0", "-o", tmp_path / "cli")
    cli_run = json.loads((tmp_path / "cli/run.json").read_text())
    assert r.run["files"] == cli_run["files"] and r.run["kind"] == cli_run["kind"] == "link"
    assert sorted(r.tables) == sorted(Path(f).stem for f in cli_run["files"] if f.endswith(".csv"))
    for f in cli_run["files"]:
        if not f.endswith(".csv"):
            continue
        with open(tmp_path / "cli" / f, newline="", encoding="utf-8") as fh:
            header = next(csv.reader(fh), [])
        assert list(r.tables[Path(f).stem].columns) == header, f
        keys = [k for k in ("cipher", "devices", "messages", "sent", "stored", "delivered", "accepted") if k in header]
        if keys:
            assert rows(tmp_path / "py" / f, keys) == rows(tmp_path / "cli" / f, keys), f


def test_mcu_sizes(tmp_path, monkeypatch):
    if not (shutil.which("arm-none-eabi-gcc") and (ROOT / ".venv/bin/python").is_file()):
        pytest.skip("no cross toolchain (arm-none-eabi-gcc) and checkout venv: scripts/setup.sh --test")
    # The installed package finds the mcu tooling through LWCBENCH_ROOT (docs/install.md).
    monkeypatch.setenv("LWCBENCH_ROOT", str(ROOT))
    r = lwcbench.mcu(tmp_path / "py", preset="sizes", profiles="Os")
    cli("mcu", "--preset", "sizes", "--profiles", "Os", "-o", tmp_path / "cli")
    key = ("cipher", "target", "profile", "flash_bytes")
    assert rows(r.path / "mcu_sizes.csv", key) == rows(tmp_path / "cli/mcu_sizes.csv", key)


def test_collect_from_log(tmp_path):
    log = ROOT / "crates/engine/tests/board-logs/noisy.log"
    r = lwcbench.collect(log, out=tmp_path / "py")
    cli("collect", "--from-log", log, "-o", tmp_path / "cli")
    key = ("cipher", "implementation", "scenario", "kiv", "size_bits", "rep", "batch", "ns_per_op")
    assert rows(r.path / "samples.csv", key) == rows(tmp_path / "cli/samples.csv", key)
    assert len(r.samples) == 4
    # run.json says how each was asked for: the Python call, and the CLI's own command line
    # (before, the Python run recorded the interpreter's argv: python -m pytest ...)
    import platform
    assert json.loads((r.path / "run.json").read_text())["args"] == [
        f"python {platform.python_version()}", f"lwcbench.collect(from_log={str(log)!r}, out={str(tmp_path / 'py')!r})"]
    assert json.loads((tmp_path / "cli/run.json").read_text())["args"][1:3] == ["collect", "--from-log"]


def test_verify_checks():
    py = {}
    for c in lwcbench.verify("ChaCha20-Poly1305"):
        p, n = py.get(c["id"], (0, 0))
        py[c["id"]] = (p + c["passed"], n + 1)
    out = cli("verify", "--cipher", "ChaCha20-Poly1305")
    got = {}
    for line in out.splitlines():
        if line.startswith(" ok ") or line.startswith("FAIL"):
            f = line[5:].split()
            if f[2:3] == ["passed"] and f[6:7] == ["checks"]:  # not the checksum lines
                got[f[0]] = (int(f[1]), int(f[5]))
    assert got and got == py




# `lwcbench mcu check-board` and `nist-lwc` (lwcbench.mcu_check_board, lwcbench.mcu_nist_lwc).
LOGS = ROOT / "crates/engine/tests/board-logs"
EMULATED = LOGS / "check-board-emulated.csv"


def _crc_line(body):
    return f"{body} *{zlib.crc32(body.encode()):08x}"


def _chacha_log(path):
    """A board run of ChaCha20-Poly1305/rustcrypto with the cycle counter, CRCs from zlib (the
    board line format of docs/board.md): 15000 and 16000 cycles per 16-byte message, 35000
    and 37000 per 128-byte one (batch 10; ticks at 1 MHz agree with 125 MHz)."""
    head = ("LWCB H 2 board=demo-pico mcu=RP2040%20Cortex-M0+ cpu_hz=125000000 tick_hz=1000000 timer=TIMER "
            "cycles=SysTick%2024-bit overhead_ticks=1 reps=2 warmup=0 groups=2 min_sample_ticks=1000 seed=1 "
            "ad_bytes=0 ciphers=ChaCha20-Poly1305/rustcrypto/Rust firmware=0.1.0 compiler=rustc%201.95.0 "
            "profile=release opt=s target=thumbv6m-none-eabi commit=abc1234")
    rows = [f"LWCB S {i} ChaCha20-Poly1305 rustcrypto Rust aead encrypt s,s {bits} random {rep} 10 {ticks} {cyc}"
            for i, (bits, rep, ticks, cyc) in enumerate(
                [(128, 0, 1200, 150000), (128, 1, 1280, 160000), (1024, 0, 2800, 350000), (1024, 1, 2960, 370000)])]
    end = f"LWCB E samples=4 warmup=0 crc={zlib.crc32(''.join(r + chr(10) for r in rows).encode()):08x}"
    path.write_text("\n".join(_crc_line(x) for x in [head, *rows, end]) + "\n")
    return path


def _cli_error(*args):
    """The CLI's one error line (without `error: `) for a failing command."""
    p = subprocess.run([BIN, *map(str, args)], capture_output=True, text=True, timeout=300)
    assert p.returncode != 0, p.stdout
    lines = [ln for ln in p.stderr.splitlines() if ln.startswith("error: ")]
    assert len(lines) == 1, p.stderr
    return lines[0][len("error: "):]


def test_mcu_check_board_hand_built_log(tmp_path, capsys):
    log = _chacha_log(tmp_path / "chacha.log")
    df = lwcbench.mcu_check_board(log, "rp2040", emulated=EMULATED)
    assert capsys.readouterr().out == ""  # prints nothing: the table is returned
    # by hand: medians 15500 and 36000 cycles; emulated 14000 and 35280 (check-board-emulated.csv);
    # errors -1500/15500 = -9.677 %, -720/36000 = -2.0 %; per byte (36000-15500)/112 = 183.036,
    # (35280-14000)/112 = 190.0, error 6.964/183.036 = +3.805 %
    assert len(df) == 1
    r = df.iloc[0]
    assert (r["cipher"], r["implementation"], r["phase"], r["from"]) == (
        "ChaCha20-Poly1305", "rustcrypto", "encrypt", "counter")
    assert (r["board_16_bytes"], r["emulated_16_bytes"], r["board_128_bytes"], r["emulated_128_bytes"]) == (
        15500, 14000, 36000, 35280)
    assert r["error_16_bytes_pct"] == pytest.approx(-9.6774, abs=1e-3)
    assert r["error_128_bytes_pct"] == pytest.approx(-2.0, abs=1e-9)
    assert r["board_per_byte"] == pytest.approx(183.0357, abs=1e-3)
    assert r["emulated_per_byte"] == pytest.approx(190.0, abs=1e-9)
    assert r["error_per_byte_pct"] == pytest.approx(3.8049, abs=1e-3)
    assert df.attrs["missing"] == [] and df.attrs["notes"] == []
    # the CLI's output on the same files, and its row read back
    out = cli("mcu", "check-board", log, "--board", "rp2040", "--emulated", EMULATED)
    assert df.attrs["text"] == out
    row = next(ln for ln in out.splitlines() if ln.startswith("ChaCha20-Poly1305/")).split()
    assert row == ["ChaCha20-Poly1305/rustcrypto", "encrypt", "counter", "15500", "14000", "-9.7", "36000", "35280",
                   "-2.0", "183.0", "190.0", "+3.8"]


def _cli_rows(out):
    """The CLI table's rows as (cipher/implementation, phase, from, numbers...) tuples."""
    lines = out.splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.startswith("cipher/implementation")) + 1
    return [tuple(ln.split()) for ln in lines[start:] if not ln.startswith(("median ", "no emulated", "note:"))]


def _py_rows(df):
    def pct(v):
        return "-" if v != v else f"{v:+.1f}"

    return [(f"{r.cipher}/{r.implementation}", r.phase, r["from"], f"{r.board_16_bytes:.0f}",
             f"{r.emulated_16_bytes:.0f}", pct(r.error_16_bytes_pct), f"{r.board_128_bytes:.0f}",
             f"{r.emulated_128_bytes:.0f}", pct(r.error_128_bytes_pct), f"{r.board_per_byte:.1f}",
             f"{r.emulated_per_byte:.1f}", pct(r.error_per_byte_pct)) for _, r in df.iterrows()]


@pytest.mark.parametrize("log,emulated", [("check-board.log", True), ("check-board.log", False),
                                          ("check-board-v1.log", True)])
def test_mcu_check_board_matches_cli(log, emulated):
    extra = {"emulated": EMULATED} if emulated else {}
    df = lwcbench.mcu_check_board(LOGS / log, board="rp2040", **extra)
    out = cli("mcu", "check-board", LOGS / log, "--board", "rp2040", *(["--emulated", EMULATED] if emulated else []))
    assert df.attrs["text"] == out
    assert _py_rows(df) == _cli_rows(out) and len(df) >= 1
    missing = next((ln for ln in out.splitlines() if ln.startswith("no emulated counterpart: ")), None)
    # the CLI joins the entries with ", " (an entry may hold a comma itself)
    assert (", ".join(df.attrs["missing"]) or None) == (missing and missing[len("no emulated counterpart: "):])
    assert df.attrs["notes"] == [ln[len("note: "):] for ln in out.splitlines() if ln.startswith("note: ")]


def test_mcu_check_board_reads_a_run_directory(tmp_path, monkeypatch):
    shutil.copy(LOGS / "check-board.log", tmp_path / "board-log.txt")
    by_dir = lwcbench.mcu_check_board(tmp_path, "rp2040", emulated=EMULATED)
    by_log = lwcbench.mcu_check_board(LOGS / "check-board.log", "rp2040", emulated=EMULATED)
    assert _py_rows(by_dir) == _py_rows(by_log) and len(by_dir) == 2
    # a collected run's Results: its board-log.txt
    collected = lwcbench.collect(LOGS / "check-board.log", out=tmp_path / "run")
    assert _py_rows(lwcbench.mcu_check_board(collected, "rp2040", emulated=EMULATED)) == _py_rows(by_log)
    # a relative path that starts with "-" is the run, not an option
    monkeypatch.chdir(tmp_path)
    shutil.copy(LOGS / "check-board.log", tmp_path / "-board.log")
    assert _py_rows(lwcbench.mcu_check_board("-board.log", "rp2040", emulated=EMULATED)) == _py_rows(by_log)


@pytest.mark.parametrize("args", [
    ("check-board.log", "--board", "nope"),
    ("v3.log", "--board", "rp2040"),
    ("truncated.log", "--board", "rp2040"),
    ("no-such.log", "--board", "rp2040"),
    ("check-board.log", "--board", "esp8266", "--emulated", EMULATED),
    ("check-board.log", "--board", "rp2040", "--emulated", "/nonexistent/table.csv"),
])
def test_mcu_check_board_bad_input_is_the_cli_message(args):
    log, _, board, *rest = args
    kw = {"emulated": rest[1]} if rest else {}
    with pytest.raises(ValueError) as e:
        lwcbench.mcu_check_board(LOGS / log, board, **kw)
    assert isinstance(e.value, lwcbench.InputError)
    assert str(e.value) == _cli_error("mcu", "check-board", LOGS / log, "--board", board, *rest)


@pytest.mark.parametrize("kw,option", [
    ({"board": "uno"}, "--board"),
    ({"board": "mkrzero", "config": "o4"}, "--config"),
    ({"board": "mkrzero", "primitive": "xof"}, "--primitive"),
    ({"board": "mkrzero", "cells": "some"}, "--cells"),
    ({"board": "mkrzero", "max_insns": 5}, "--max-insns"),
    ({"board": "mkrzero", "jobs": 0}, "--jobs"),
])
def test_mcu_nist_lwc_bad_option_is_the_cli_message(tmp_path, kw, option):
    with pytest.raises(ValueError) as e:
        lwcbench.mcu_nist_lwc(tmp_path / "py", **kw)
    argv = [x for k, v in kw.items() for x in ("--" + k.replace("_", "-"), v)]
    cli_msg = _cli_error("mcu", "nist-lwc", *argv, "--out", tmp_path / "cli")
    assert option in str(e.value) and str(e.value) == "mcu: " + cli_msg
    assert not (tmp_path / "py").exists() and not (tmp_path / "cli").exists()


def test_mcu_board_option_is_the_cli_message(tmp_path):
    with pytest.raises(ValueError) as e:
        lwcbench.mcu(tmp_path / "py", board="nope")
    assert str(e.value) == _cli_error("mcu", "--board", "nope", "--out", tmp_path / "cli")


def test_mcu_nist_lwc_rows(tmp_path, monkeypatch):
    venv = Path(os.environ.get("MCU_VENV", ROOT / ".venv"))
    tree = Path(os.environ.get("LWCBENCH_NIST_LWC", ROOT.parent / "shared/nist-lwc"))
    if not (shutil.which("arm-none-eabi-gcc") and (venv / "bin/python").is_file() and tree.is_dir()):
        pytest.skip("no cross toolchain, mcu venv (MCU_VENV) or NIST LWC tree (LWCBENCH_NIST_LWC)")
    monkeypatch.setenv("LWCBENCH_ROOT", str(ROOT))
    monkeypatch.setenv("MCU_VENV", str(venv))
    monkeypatch.setenv("LWCBENCH_NIST_LWC", str(tree))
    one = dict(board="mkrzero", impl="ascon/ascon128v12/ref", cells="slope", jobs=1)
    r = lwcbench.mcu_nist_lwc(tmp_path / "py", **one)
    cli("mcu", "nist-lwc", "--board", "mkrzero", "--impl", one["impl"], "--cells", "slope", "--jobs", 1,
        "-o", tmp_path / "cli")
    key = ("board", "config", "submission", "variant", "implementation", "cell", "published_cycles",
           "emulated_cycles", "error_pct", "instructions")
    want = rows(tmp_path / "cli/nist_lwc_cells.csv", key)
    assert rows(r.path / "nist_lwc_cells.csv", key) == want
    assert [c for *_, c, _p, _e, _err, _i in want] == ["enc(0:1024)", "enc(0:128)"]
    assert sorted(r.tables) == ["nist_lwc_cells", "nist_lwc_impls"]
    assert list(r.tables["nist_lwc_cells"]["cell"]) == ["enc(0:128)", "enc(0:1024)"]
