"""End to end without hardware: the Cortex-M3 image of firmware/bench runs under QEMU
(lm3s6965evb), its UART goes to `lwcbench collect`, and the result files load in Python and
render in the report.

Needs: qemu-system-arm, the thumbv7m-none-eabi Rust target, a release `lwcbench` binary
(LWCBENCH_BIN, default target/release/lwcbench) and the Python package `lwcbench`.
Build outputs go to $CARGO_TARGET_DIR/fw (default target/fw)."""
import csv
import json
import os
import re
import subprocess
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FW = ROOT / "firmware"
TARGET = "thumbv7m-none-eabi"
# -icount: the virtual clock advances 2^0 = 1 ns per instruction, whatever the host's speed,
# so the SysTick counts are deterministic.
QEMU = ["qemu-system-arm", "-M", "lm3s6965evb", "-nographic", "-monitor", "none",
        "-icount", "shift=0,align=off,sleep=off"]


def lwcbench_bin() -> str:
    return os.environ.get("LWCBENCH_BIN", str(ROOT / "target" / "release" / "lwcbench"))


@pytest.fixture(scope="session")
def image() -> Path:
    tdir = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target")) / "fw"
    env = dict(os.environ, CARGO_TARGET_DIR=str(tdir))
    subprocess.run(["cargo", "build", "--release", "-p", "lwc-board-qemu", "--target", TARGET],
                   cwd=FW, env=env, check=True)
    return tdir / TARGET / "release" / "lwc-board-qemu"


def test_systick_rate(image):
    """The image's header says tick_hz=12500000; check it against QEMU's virtual clock: a loop
    of 2,000,000 instructions lasts 2 ms at 1 ns per instruction."""
    proc = subprocess.Popen(QEMU + ["-serial", "stdio", "-kernel", str(image)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        line = proc.stdout.readline().decode()
    finally:
        proc.kill()
        proc.wait()
    m = re.search(r"calibration: 2000000 instructions = (\d+) ticks", line)
    assert m, line
    hz = int(m.group(1)) * 500
    assert abs(hz - 12_500_000) / 12_500_000 < 0.001, hz


def test_qemu_run_through_serial_port(image, tmp_path):
    """QEMU's UART on a pseudo-terminal; `lwcbench collect --port` kicks the firmware and reads
    the run: the serial path of a real board."""
    qemu = subprocess.Popen(QEMU + ["-serial", "pty", "-kernel", str(image)], stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        pty = None
        t0 = time.time()
        while pty is None and time.time() - t0 < 10:
            line = qemu.stdout.readline()
            m = re.search(r"(/dev/pts/\d+)", line)
            pty = m.group(1) if m else None
        assert pty, "QEMU did not report its pty"
        out = tmp_path / "qemu-run"
        save = tmp_path / "capture.log"
        c = subprocess.run([lwcbench_bin(), "collect", "--port", pty, "--timeout", "120", "-o", str(out),
                            "--save-log", str(save)], capture_output=True, text=True, timeout=150)
        assert c.returncode == 0, c.stderr
    finally:
        qemu.kill()
        qemu.wait()
    assert "0 malformed" in c.stderr, c.stderr
    check_results(out, save.read_text())
    # The same capture as a saved log gives the same rows.
    again = tmp_path / "from-log"
    r = subprocess.run([lwcbench_bin(), "collect", "--from-log", str(save), "-o", str(again)],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert (again / "samples.csv").read_text() == (out / "samples.csv").read_text()


def check_results(out: Path, log: str):
    header = next(l for l in log.splitlines() if "LWCB H " in l)
    kv = dict(f.split("=", 1) for f in header.split(" *")[0].split()[3:])
    groups, reps, warmup = int(kv["groups"]), int(kv["reps"]), int(kv["warmup"])
    promised = {tuple(c.split("/")[:2]) for c in kv["ciphers"].split(",")}
    aeads = {("Ascon-AEAD128", "rustcrypto"), ("ChaCha20-Poly1305", "rustcrypto"), ("AES-128-CCM", "rustcrypto"),
             ("AES-128-GCM", "rustcrypto")}
    assert promised == {("DRACO", "rust-ref"), ("DRACO", "rust-fast"), ("Trivium", "rust"), ("Grain-128a", "rust")} | aeads
    # format version 2: the AEAD groups authenticate no associated data, as the emulated images
    assert header.split()[2:3] == ["2"] and kv["ad_bytes"] == "0", header
    with open(out / "samples.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == groups * reps
    with open(out / "warmup.csv", newline="") as f:
        assert len(list(csv.DictReader(f))) == groups * warmup
    assert {(r["cipher"], r["implementation"]) for r in rows} == promised
    assert all(float(r["ns_per_op"]) > 0 and int(r["batch"]) >= 1 for r in rows)
    assert {r["scenario"] for r in rows} == {"init", "keystream", "full", "keysetup", "encrypt"}
    assert {int(r["size_bits"]) for r in rows} == {0, 1, 8, 128, 1024}
    # More keystream costs more: 1024 bits of DRACO rust-ref > 100 × 1 bit would fail if the
    # work were optimised away (the reference clocks bit by bit).
    med = lambda sz: sorted(float(r["ns_per_op"]) for r in rows if r["implementation"] == "rust-ref"
                            and r["scenario"] == "keystream" and r["size_bits"] == str(sz))[reps // 2]
    assert med(1024) > 100 * med(1)
    # The AEAD groups: keysetup and encrypt of 16 and 128 bytes, family aead; 128 bytes cost
    # more than 16 (the message loop ran), and less than 8 × (the tag and set-up are per call).
    arows = [r for r in rows if (r["cipher"], r["implementation"]) in aeads]
    assert {r["family"] for r in arows} == {"aead"}
    assert {(r["scenario"], r["size_bits"]) for r in arows} == {("keysetup", "0"), ("encrypt", "128"),
                                                               ("encrypt", "1024")}
    for c, i in aeads:
        enc = lambda sz: sorted(float(r["ns_per_op"]) for r in arows if r["cipher"] == c
                                and r["scenario"] == "encrypt" and r["size_bits"] == str(sz))[reps // 2]
        assert enc(128) < enc(1024) < 8 * enc(128), (c, enc(128), enc(1024))
    # The power trigger's marker lines (docs/power.md): one per timed batch, before its sample
    # line, naming its seq, operations and ticks; outside the run's seq (the collector took the run).
    lines = [l.split(" *")[0] for l in log.splitlines() if "LWCB " in l]
    lines = [l[l.index("LWCB "):] for l in lines]
    assert "trigger=markers-only idle_ticks=0" in header
    markers = [i for i, l in enumerate(lines) if l.startswith("LWCB M ")]
    assert len(markers) == groups * (reps + warmup)
    for n, i in enumerate(markers):
        m, s = lines[i].split(), lines[i + 1].split()
        assert s[1] in ("S", "W") and m[2] == str(n) and m[3] == s[2] and m[4] == s[12], (lines[i], lines[i + 1])
        assert int(m[6]) - int(m[5]) == int(s[13])
    run = json.loads((out / "run.json").read_text())
    assert run["machine"]["hostname"] == "qemu-lm3s6965evb"
    assert run["build"]["target"] == TARGET
    assert run["clock"]["resolution_ns"] == pytest.approx(80.0)

    import lwcbench
    res = lwcbench.load(out)
    assert len(res.samples) == groups * reps
    assert set(res.samples["cipher"]) == {"DRACO", "Trivium", "Grain-128a"} | {c for c, _ in aeads}
    r = subprocess.run([lwcbench_bin(), "report", str(out)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    html = (out / "report.html").read_text()
    assert "qemu-lm3s6965evb" in html and "Grain-128a" in html
