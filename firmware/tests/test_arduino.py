"""The Arduino sketch (firmware/arduino/lwcbench) without an Arduino toolchain: its sources
compile with the ESP8266 (xtensa-lx106-elf-g++) and ESP32-C3-class (riscv64-unknown-elf-g++,
RV32IMC) cross compilers against the stand-in Arduino.h; on the host its C++ Trivium matches an
eSTREAM vector and the Rust implementation, and a whole run through the stand-in is accepted
by `lwcbench collect`."""
import csv
import filecmp
import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SKETCH = ROOT / "firmware" / "arduino" / "lwcbench"
STANDIN = ROOT / "firmware" / "arduino" / "standin"
SOURCES = ["bench.cpp", "trivium.cpp", "draco.cpp", "lwcbench.ino"]
# the C AEADs of the emulated ESP8266 images, compiled from mcu/lx106 (platformio.ini's -I)
LX106 = ROOT / "mcu" / "lx106"
C_SOURCES = ["lwc_aes128.c", "lwc_ccm.c", "lwc_gcm.c", "lwc_chachapoly.c"]
FLAGS = ["-x", "c++", "-std=c++17", "-Os", "-ffreestanding", "-fno-exceptions", "-fno-rtti", "-Wall", "-Werror",
         "-I", str(STANDIN), "-I", str(LX106)]
C_FLAGS = ["-Os", "-ffreestanding", "-Wall", "-Werror", "-I", str(LX106)]
CROSS = {
    "esp8266-lx106": ["xtensa-lx106-elf-g++"],
    "rv32imc-esp32c3": ["riscv64-unknown-elf-g++", "-march=rv32imc", "-mabi=ilp32"],
}


def lwcbench_bin() -> str:
    return os.environ.get("LWCBENCH_BIN", str(ROOT / "target" / "release" / "lwcbench"))


def test_draco_copies_are_identical():
    """Arduino builds only what is in the sketch folder: draco.cpp/.h there are copies of
    cpp/draco, and must stay byte-identical (refresh with cp cpp/draco/draco.* firmware/arduino/lwcbench/)."""
    for f in ["draco.cpp", "draco.h"]:
        assert filecmp.cmp(ROOT / "cpp" / "draco" / f, SKETCH / f, shallow=False), f


@pytest.mark.parametrize("name", sorted(CROSS))
def test_sketch_cross_compiles(name, tmp_path):
    cxx = CROSS[name]
    for src in SOURCES:
        flags = FLAGS if src != "draco.cpp" else [f for f in FLAGS if f != "-Werror"]
        r = subprocess.run(cxx + flags + ["-c", str(SKETCH / src), "-o", str(tmp_path / (src + ".o"))],
                           capture_output=True, text=True)
        assert r.returncode == 0, f"{name} {src}: {r.stderr}"
        assert (tmp_path / (src + ".o")).stat().st_size > 0
    cc = [cxx[0].replace("g++", "gcc")] + cxx[1:]
    for src in C_SOURCES:
        r = subprocess.run(cc + C_FLAGS + ["-c", str(SKETCH / src), "-o", str(tmp_path / (src + ".o"))],
                           capture_output=True, text=True)
        assert r.returncode == 0, f"{name} {src}: {r.stderr}"
    # each AEAD under its own name (every source defines the NIST API's crypto_aead_encrypt)
    nm = "xtensa-lx106-elf-nm" if "xtensa" in cxx[0] else "riscv64-unknown-elf-nm"
    syms = subprocess.run([nm, *[str(tmp_path / (s + ".o")) for s in C_SOURCES]], capture_output=True, text=True,
                          check=True).stdout
    defined = {l.split()[-1] for l in syms.splitlines() if " T " in l}
    assert {"lwc_ccm_encrypt", "lwc_gcm_encrypt", "lwc_chachapoly_encrypt", "aes128_encrypt"} <= defined
    assert "crypto_aead_encrypt" not in defined


TRIVIUM_MAIN = r"""
#include <stdio.h>
#include <stdlib.h>
#include "trivium.h"
static void hex(const char *s, uint8_t *b, int n) { for (int i = 0; i < n; i++) sscanf(s + 2 * i, "%2hhx", &b[i]); }
int main(int argc, char **argv) {
    uint8_t k[10], iv[10], out[512];
    trivium_state st;
    hex(argv[1], k, 10); hex(argv[2], iv, 10);
    int nbits = atoi(argv[3]);
    trivium_init(&st, k, iv);
    /* in two calls of odd lengths, to exercise the bit-granular continuation */
    int a = nbits / 3;
    uint8_t o1[512] = {0}, o2[512] = {0};
    trivium_keystream_bits(&st, o1, a);
    trivium_keystream_bits(&st, o2, nbits - a);
    for (int i = 0; i < nbits; i++) {
        int bit = i < a ? (o1[i / 8] >> (i % 8)) & 1 : (o2[(i - a) / 8] >> ((i - a) % 8)) & 1;
        out[i / 8] = (i % 8 ? out[i / 8] : 0) | (bit << (i % 8));
    }
    for (int i = 0; i < (nbits + 7) / 8; i++) printf("%02x", out[i]);
    printf("\n");
    return 0;
}
"""


@pytest.fixture(scope="module")
def trivium_host(tmp_path_factory):
    d = tmp_path_factory.mktemp("triv")
    (d / "main.cpp").write_text(TRIVIUM_MAIN)
    exe = d / "triv"
    subprocess.run(["g++", "-O2", "-I", str(SKETCH), str(d / "main.cpp"), str(SKETCH / "trivium.cpp"), "-o", str(exe)],
                   check=True)
    return exe


def test_trivium_estream_vector(trivium_host):
    # eSTREAM Trivium test vectors, Set 1, vector# 0 (key 80 00…, IV 0), stream[0..63]
    # (shared/vectors/estream-via-avr-crypto-lib/trivium-unverified.test-vectors)
    want = ("38EB86FF730D7A9CAF8DF13A4420540DBB7B651464C87501552041C249F29A64"
            "D2FBF515610921EBE06C8F92CECF7F8098FF20CCCC6A62B97BE8EF7454FC80F9").lower()
    out = subprocess.run([str(trivium_host), "80000000000000000000", "00" * 10, "512"], capture_output=True,
                         text=True, check=True).stdout.strip()
    assert out == want


@pytest.mark.parametrize("key,iv,nbits", [
    ("00112233445566778899", "0a0b0c0d0e0f10111213", 1000),
    ("ffeeddccbbaa99887766", "00000000000000000001", 77),
    ("0123456789abcdef0123", "fedcba9876543210fedc", 4096),
])
def test_trivium_matches_rust(trivium_host, key, iv, nbits):
    """The Rust Trivium (crates/estream, via `lwcbench keystream`) is an independent oracle."""
    rust = subprocess.run([lwcbench_bin(), "keystream", "--cipher", "Trivium", "--key", key, "--iv", iv,
                           "--bits", str(nbits)], capture_output=True, text=True, check=True).stdout.strip()
    cpp = subprocess.run([str(trivium_host), key, iv, str(nbits)], capture_output=True, text=True,
                         check=True).stdout.strip()
    assert cpp == rust


def test_sketch_run_on_host_is_collected(tmp_path):
    """The sketch's benchmark code, built for the host with the stand-in, prints a run that
    `lwcbench collect` accepts whole (same line format as the Rust firmware)."""
    exe = tmp_path / "sketch"
    srcs = [str(SKETCH / s) for s in ["bench.cpp", "trivium.cpp", "draco.cpp"]]
    objs = []
    for src in C_SOURCES:  # C, not C++: compiled apart
        objs.append(str(tmp_path / (src + ".o")))
        subprocess.run(["gcc", "-O2", "-I", str(LX106), "-c", str(SKETCH / src), "-o", objs[-1]], check=True)
    subprocess.run(["g++", "-O2", "-std=c++17", "-I", str(STANDIN), "-I", str(LX106), "-DLWCB_REPS=2",
                    "-DLWCB_WARMUP=1", "-DLWCB_MIN_TICKS=100", "-x", "c++", str(SKETCH / "lwcbench.ino"), "-x", "none",
                    *srcs, *objs, str(STANDIN / "host.cpp"), "-o", str(exe)], check=True)
    run = subprocess.run([str(exe)], input=b"\n", capture_output=True, timeout=120, check=True)
    log = run.stdout
    out = tmp_path / "run"
    r = subprocess.run([lwcbench_bin(), "collect", "--from-log", "-", "-o", str(out)], input=log,
                       capture_output=True, timeout=60)
    assert r.returncode == 0, r.stderr.decode()
    assert b"0 malformed" in r.stderr
    with open(out / "samples.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    # 3 stream ciphers × 4 key/IV variants × (init + 2 × 4 sizes) + 3 AEADs × 4 × (encrypt of 16 and 128 B)
    groups = 3 * 4 * (1 + 2 * 4) + 3 * 4 * 2
    assert len(rows) == groups * 2
    aeads = {("ChaCha20-Poly1305", "c", "C"), ("AES-128-CCM", "c", "C"), ("AES-128-GCM", "c", "C")}
    assert {(r["cipher"], r["implementation"], r["language"]) for r in rows} == {
        ("DRACO", "cpp-ref", "C++"), ("DRACO", "cpp-fast", "C++"), ("Trivium", "cpp", "C++")} | aeads
    arows = [r for r in rows if (r["cipher"], r["implementation"], r["language"]) in aeads]
    assert {(r["family"], r["scenario"], r["size_bits"]) for r in arows} == {("aead", "encrypt", "128"),
                                                                           ("aead", "encrypt", "1024")}
    header = next(l for l in log.decode().splitlines() if l.startswith("LWCB H "))
    assert header.startswith("LWCB H 2 ") and " ad_bytes=0 " in header
    # the names are those of the emulated ESP8266 rows: check-board finds a counterpart for each
    chk = subprocess.run([lwcbench_bin(), "mcu", "check-board", str(out), "--board", "esp8266"], capture_output=True,
                         text=True, timeout=60)
    assert chk.returncode == 0, chk.stderr
    for c, i, _ in aeads:
        assert any(l.startswith(f"{c}/{i} ") for l in chk.stdout.splitlines()), chk.stdout
    # The power trigger (default GPIO4, 2 ms idle): one marker and one pulse per timed batch,
    # each marker naming the seq, batch and ticks of the sample line after it.
    lines = [l for l in log.decode().splitlines() if l.startswith("LWCB ")]
    assert "trigger=GPIO4 idle_ticks=2000" in next(l for l in lines if l.startswith("LWCB H "))
    markers = [i for i, l in enumerate(lines) if l.startswith("LWCB M ")]
    assert len(markers) == groups * 3
    assert f"trigger: {groups * 3} rises, {groups * 3} falls" in run.stderr.decode()
    for n, i in enumerate(markers):
        m = lines[i].split(" *")[0].split()
        s = lines[i + 1].split(" *")[0].split()
        assert m[2] == str(n) and m[3] == s[2] and m[4] == s[12], (lines[i], lines[i + 1])
        assert int(m[6]) - int(m[5]) == int(s[13])
    # Host timing is noisy (preemption can shrink a calibrated batch): nearly all positive.
    ns = [float(r["ns_per_op"]) for r in rows]
    assert min(ns) >= 0 and sum(x > 0 for x in ns) >= 0.95 * len(ns)
