#!/usr/bin/env python3
"""Instruction parity: instructions per AEAD encryption in `lwcbench run --counter
instructions` against a plain loop calling the same library directly — Rust
(crates/catalog/examples/plain_loop.rs) for RustCrypto and the own ciphers, C
(scripts/ci/parity/plain.c, built here with gcc) for OpenSSL, libgcrypt and wolfCrypt — both
counted by valgrind's callgrind over 16 operations after 4 untimed ones. Deterministic, so it
can gate CI where timings (scripts/ci/host-parity.sh) cannot.

The adapter may cost at most MAX_EXTRA instructions per message more than the plain loop (its
argument checks, the trait-object call, the Result plumbing, and LLVM inlining the library
differently inside a large binary), or MAX_RATIO where that is larger. A library whose code
depends on the caller's inlining (e.g. a runtime flag that only constant-folds when inlined)
shows up here as a per-byte excess.

usage: scripts/ci/parity/instructions.py [--check] [--lwcbench BIN] [--plain BIN] [--plain-c BIN] [--out FILE]
  --plain-c  the C loop; without it, it is compiled into a temporary directory
"""
import argparse
import csv
import os
import re
import subprocess
import sys
import tempfile

MAX_EXTRA = 200.0  # instructions per message
MAX_RATIO = 1.03
SIZES = [16, 1024, 16384]
# (plain loop: "rust" or "c", its lib, its cipher, lwcbench cipher, lwcbench implementation)
CASES = [
    ("rust", "rustcrypto", "chacha20-poly1305", "ChaCha20-Poly1305", "rustcrypto"),
    ("rust", "rustcrypto", "aes-128-gcm", "AES-128-GCM", "rustcrypto"),
    ("rust", "own", "xoodyak", "Xoodyak", "rust-ref"),
    ("c", "openssl", "chacha20-poly1305", "ChaCha20-Poly1305", "openssl"),
    ("c", "openssl", "aes-128-gcm", "AES-128-GCM", "openssl"),
    ("c", "gcrypt", "aes-128-gcm", "AES-128-GCM", "gcrypt"),
    ("c", "wolfssl", "aes-128-gcm", "AES-128-GCM", "wolfssl"),
]
PLAIN_C = os.path.join(os.path.dirname(os.path.abspath(__file__)), "plain.c")


def build_plain_c(out):
    """scripts/ci/parity/plain.c against the system's libraries (as host-parity.sh builds it,
    without -march=native: the loop's own instructions are the same few either way)."""
    flags = subprocess.run(["pkg-config", "--cflags", "--libs", "libcrypto", "libgcrypt", "wolfssl"],
                           capture_output=True, text=True)
    if flags.returncode != 0:
        fail(f"pkg-config libcrypto libgcrypt wolfssl: {flags.stderr.strip()} (scripts/setup.sh --test installs them)")
    r = subprocess.run(["gcc", "-O2", "-Wall", "-Wextra", "-o", out, PLAIN_C] + flags.stdout.split(),
                       capture_output=True, text=True)
    if r.returncode != 0:
        fail(f"gcc {PLAIN_C}: {r.stderr.strip().splitlines()[-1:]}")
    return out


def fail(msg):
    print(f"error: {msg}", file=sys.stderr)
    sys.exit(1)


def plain_count(plain, lib, cipher, size, tmp, toggle):
    """`toggle`: the Rust loop marks its counted operations by a function name; the C loop
    switches collection itself (CALLGRIND_TOGGLE_COLLECT)."""
    out = os.path.join(tmp, f"cg.{lib}.{cipher}.{size}")
    env = dict(os.environ, PARITY_COUNT="16")
    r = subprocess.run(
        ["valgrind", "--tool=callgrind", "--collect-atstart=no"] + (["--toggle-collect=*counted_ops*"] if toggle else [])
        + [f"--callgrind-out-file={out}", plain, lib, cipher, str(size), "ss", "5", "100"],
        env=env, capture_output=True, text=True)
    m = re.search(r"Collected : (\d+)", r.stderr)
    if r.returncode != 0 or not m or int(m.group(1)) == 0:
        fail(f"plain loop {lib} {cipher} {size} B under callgrind: {r.stderr.strip().splitlines()[-1:]}")
    return int(m.group(1)) / 16


def lwc_counts(lwc, cipher, impl, tmp):
    d = os.path.join(tmp, f"run-{cipher}")
    sizes = ",".join(f"{s}B" for s in SIZES)
    r = subprocess.run([lwc, "run", "--cipher", cipher, "--impl", impl, "--scenario", "encrypt", "--kiv", "ss",
                        "--sizes", sizes, "--counter", "instructions", "--out", d, "--force", "--quiet"],
                       capture_output=True, text=True)
    if r.returncode != 0:
        fail(f"lwcbench run {cipher}/{impl}: {r.stderr.strip().splitlines()[-1:]}")
    got = {}
    with open(os.path.join(d, "instructions.csv"), newline="") as f:
        for row in csv.DictReader(f):
            if row["scenario"] == "encrypt":
                got[int(row["size_bits"]) // 8] = float(row["instructions_per_op"])
    missing = [s for s in SIZES if s not in got]
    if missing:
        fail(f"lwcbench run {cipher}/{impl}: no instruction count for {missing} B")
    return got


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="exit 1 if a case is above the bound")
    ap.add_argument("--lwcbench", default=os.path.join(os.environ.get("CARGO_TARGET_DIR", "target"),
                                                     "release", "lwcbench"))
    ap.add_argument("--plain", default=os.path.join(os.environ.get("CARGO_TARGET_DIR", "target"),
                                                  "release", "examples", "plain_loop"))
    ap.add_argument("--plain-c", help="the C plain loop (default: compile scripts/ci/parity/plain.c)")
    ap.add_argument("--out", help="write the table as CSV here too")
    a = ap.parse_args()
    for b in (a.lwcbench, a.plain):
        if not os.access(b, os.X_OK):
            fail(f"{b}: not built (cargo build --release -p lwcbench -p lwcbench-catalog --example plain_loop)")
    rows, bad = [], []
    with tempfile.TemporaryDirectory(prefix="lwc-iparity-") as tmp:
        plain_c = a.plain_c or build_plain_c(os.path.join(tmp, "plain"))
        for prog, lib, cipher, lcipher, impl in CASES:
            lwc = lwc_counts(a.lwcbench, lcipher, impl, tmp)
            for s in SIZES:
                plain = plain_count(a.plain if prog == "rust" else plain_c, lib, cipher, s, tmp, prog == "rust")
                extra = lwc[s] - plain
                ok = extra <= max(MAX_EXTRA, (MAX_RATIO - 1) * plain)
                rows.append((f"{lcipher}/{impl}", s, lwc[s], plain, extra, lwc[s] / plain, ok))
                if not ok:
                    bad.append(f"{lcipher}/{impl} at {s} B: {lwc[s]:.0f} instructions vs {plain:.0f} in the plain loop")
    print("| implementation | bytes | lwcbench | plain loop | extra | ratio |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, s, l, p, e, r, ok in rows:
        print(f"| {name} | {s} | {l:.1f} | {p:.1f} | {e:+.1f} | {r:.4f}{'' if ok else ' **over**'} |")
    if a.out:
        with open(a.out, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["implementation", "bytes", "lwcbench_instr_per_op", "plain_instr_per_op", "extra", "ratio"])
            for name, s, l, p, e, r, _ in rows:
                w.writerow([name, s, f"{l:.2f}", f"{p:.2f}", f"{e:.2f}", f"{r:.5f}"])
    if bad and a.check:
        fail(f"instruction parity: {'; '.join(bad)} (bound: +{MAX_EXTRA:.0f} instructions or "
             f"x{MAX_RATIO})")


if __name__ == "__main__":
    main()
