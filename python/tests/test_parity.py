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


