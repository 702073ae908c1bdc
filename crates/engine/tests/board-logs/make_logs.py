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
