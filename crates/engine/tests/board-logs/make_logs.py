#!/usr/bin/env python3
"""Writes the hand-written board logs used by crates/engine/src/collect/tests.rs.

The CRCs come from Python's zlib.crc32 (independent of the Rust collector); the rows are the
ones whose conversions tests.rs computes by hand. Run from this directory."""
import zlib


def L(body):
    return f"{body} *{zlib.crc32(body.encode()):08x}"


H = ("LWCB H 1 board=demo mcu=Cortex-M0+ cpu_hz=125000000 tick_hz=1000000 timer=RP2040%20TIMER "
     "cycles=SysTick%2024-bit overhead_ticks=2 reps=2 warmup=1 groups=2 min_sample_ticks=100 seed=7 "
     "ciphers=DRACO/rust-ref/Rust,Trivium/cpp/C%2B%2B firmware=0.1.0 compiler=rustc%201.95.0 profile=release "
     "opt=s target=thumbv6m-none-eabi commit=abc1234 colour=blue")
ROWS = ["LWCB W 0 DRACO rust-ref Rust stream init s,s 0 random 0 4 400 50000",
        "LWCB S 1 DRACO rust-ref Rust stream init s,s 0 random 0 4 420 52500",
        "LWCB S 2 DRACO rust-ref Rust stream init s,s 0 random 1 4 410 51250",
        "LWCB W 3 Trivium cpp C%2B%2B stream keystream r,r 128 random 0 10 150 -",
        "LWCB S 4 Trivium cpp C%2B%2B stream keystream r,r 128 random 0 10 125 15625",
        "LWCB S 5 Trivium cpp C%2B%2B stream keystream r,r 128 random 1 10 130 -"]
RUN_CRC = zlib.crc32("".join(r + "\n" for r in ROWS).encode())
E = f"LWCB E samples=4 warmup=2 crc={RUN_CRC:08x}"
rows = [L(r) for r in ROWS]
good = [L(H)] + rows + [L(E)]
INFO = L("LWCB I ready: send any byte to start")


def write(name, text):
    with open(name, "w", newline="") as f:
        f.write(text)


write("good.log", "\n".join(good) + "\n")
# noisy: bootloader banner, blank line, NULs and garbage, Tera Term / CoolTerm style stamps,
# CRLF and lone CR line ends, an info line, progress text
n = ["ets Jan  8 2013,rst cause:2, boot mode:(3,6)", "", "\x00\x00garbage \xff?",
     "[12:00:01.123] " + INFO, "[Sun Nov 22 12:00:01.200 2026] " + L(H)]
for i, r in enumerate(rows):
    n.append("[12:00:01.3%02d] " % i + r)
    if i == 2:
        n.append("[12:00:01.400] progress: 50 %")
n.append("12:00:02.000  " + L(E))
n.append("board idle")
write("noisy.log", "\r\n".join(n[:5]) + "\r\n" + "\r".join(n[5:8]) + "\r" + "\r\n".join(n[8:]) + "\r\n")
write("truncated.log", "\n".join(good[:6] + [rows[5][:40]]))  # cut inside seq 5, no end line
c = list(good)
c[5] = c[5].replace(" 10 125 ", " 10 135 ")  # one digit changed, CRC left as it was
write("corrupted.log", "\n".join(c) + "\n")
write("lost-line.log", "\n".join(good[:3] + good[4:]) + "\n")  # seq 2 lost
write("bad-run-crc.log", "\n".join(good[:-1] + [L(f"LWCB E samples=4 warmup=2 crc={RUN_CRC ^ 1:08x}")]) + "\n")
write("two-runs.log", "\n".join(good[:3] + ["rst cause 1"] + good) + "\n")
write("short-promise.log", "\n".join([L(H.replace("groups=2", "groups=3"))] + rows + [L(E)]) + "\n")
# interleaved: run A (tick_hz=1000) starts, then run B's header; A's lines keep arriving
# between B's. A's seq 2 after B's seq 0 looks like a gap, B's seq 1 then goes back.
HA = H.replace("tick_hz=1000000", "tick_hz=1000")
write("interleaved.log", "\n".join([L(HA), rows[0], rows[1], L(H), rows[0], rows[2], rows[1]] + rows[3:] + [L(E)]) + "\n")
# second-kick: a complete run, the firmware's ready line, then a run started by a second kick
# and cut off by the end of the capture.
write("second-kick.log", "\n".join(good + [INFO, L(H), rows[0], rows[1][:30]]))

# Format version 2 (docs/board.md): the header states ad_bytes; AEAD groups beside stream ones.
# check-board.log is the run of `lwcbench mcu check-board` in crates/cli/tests/check_board.rs,
# whose expected cycles, slopes and errors are computed by hand there (tick_hz 1 MHz; the
# Trivium groups have cycle counts, the AEAD ones only ticks).
H2 = ("LWCB H 2 board=demo-pico mcu=RP2040%20Cortex-M0+ cpu_hz=125000000 tick_hz=1000000 timer=TIMER "
      "cycles=SysTick%2024-bit overhead_ticks=1 reps=3 warmup=0 groups=8 min_sample_ticks=1000 seed=1 ad_bytes=0 "
      "ciphers=Trivium/rust/Rust,DRACO/rust-ref/Rust,AES-128-GCM/rustcrypto/Rust,ChaCha20-Poly1305/rustcrypto/Rust "
      "firmware=0.1.0 compiler=rustc%201.95.0 profile=release opt=s target=thumbv6m-none-eabi commit=abc1234")
# (cipher, impl, family, scenario, size, batch, [(ticks, cycles or "-")] × 3)
G2 = [("Trivium", "rust", "stream", "init", 0, 100, [(300, 37500), (310, 38750), (305, 38125)]),
      ("Trivium", "rust", "stream", "keystream", 128, 100, [(650, 80000), (672, 84000), (632, 79000)]),
      ("Trivium", "rust", "stream", "keystream", 1024, 100, [(3200, 400000), (3360, 420000), (3280, 410000)]),
      ("DRACO", "rust-ref", "stream", "keystream", 128, 1, [(2800, "-"), (2810, "-"), (2790, "-")]),
      ("DRACO", "rust-ref", "stream", "keystream", 1024, 1, [(22300, "-"), (22310, "-"), (22290, "-")]),
      ("AES-128-GCM", "rustcrypto", "aead", "encrypt", 128, 10, [(2400, "-"), (2240, "-"), (2320, "-")]),
      ("AES-128-GCM", "rustcrypto", "aead", "encrypt", 1024, 10, [(7000, "-"), (7200, "-"), (6900, "-")]),
      ("ChaCha20-Poly1305", "rustcrypto", "aead", "encrypt", 128, 10, [(1200, "-"), (1210, "-"), (1190, "-")])]
R2 = []
for (c, i, fam, sc, size, batch, reps) in G2:
    for rep, (t, cy) in enumerate(reps):
        R2.append(f"LWCB S {len(R2)} {c} {i} Rust {fam} {sc} s,s {size} random {rep} {batch} {t} {cy}")
E2 = f"LWCB E samples={len(R2)} warmup=0 crc={zlib.crc32(''.join(r + chr(10) for r in R2).encode()):08x}"
write("check-board.log", "\n".join([L(H2)] + [L(r) for r in R2] + [L(E2)]) + "\n")
# the same run as version 1 (no ad_bytes) built with opt-level 3
H1 = H2.replace("LWCB H 2 ", "LWCB H 1 ").replace(" ad_bytes=0", "").replace(" opt=s ", " opt=3 ")
write("check-board-v1.log", "\n".join([L(H1)] + [L(r) for r in R2] + [L(E2)]) + "\n")
# version 2 without its required key, and a version this collector does not know
write("v2-no-ad.log", "\n".join([L(H2.replace(" ad_bytes=0", ""))] + [L(r) for r in R2] + [L(E2)]) + "\n")
write("v3.log", "\n".join([L(H2.replace("LWCB H 2 ", "LWCB H 3 "))] + [L(r) for r in R2] + [L(E2)]) + "\n")
