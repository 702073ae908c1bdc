#!/usr/bin/env python3
"""The C++ DRACO (cpp/draco) on the ESP8266 in emulation, beside the DRACO study's measured figure.

Builds cpp/draco/draco.cpp with xtensa-lx106-elf-g++ (-Os or -O3 plus the board's flags,
data/boards.toml [board.esp8266.lx106]) and mcu/lx106/stream_harness.c, runs one timed init and
one timed keystream call per bit count in QEMU's lx106 CPU (mcu/lx106.py) and prints, per
variant, the LX106 model's cycles per
keystream bit and the study's ESP8266 figure (282,891 us at 80 MHz over 22,464 bits, init
excluded; mcu/run.py). Warm steady state, as everywhere in the LX106 model.

usage: lx106_draco.py [--variant ref|fast] [--config Os|O3] [--bits N ...]
"""
from __future__ import annotations

import argparse
import pathlib
import sys
import tempfile

import lx106

REPO = lx106.MCU.parent
STUDY_NBITS, STUDY_US, STUDY_MHZ = 22_464, 282_891.0, 80.0  # mcu/run.py
STUDY_CPB = STUDY_US * STUDY_MHZ / STUDY_NBITS
VARIANTS = {"ref": "LWC_DRACO_REF", "fast": "LWC_DRACO_FAST"}
CONFIGS = {"Os": "-Os", "O3": "-O3"}


def build(variant: str, config: str, bm: lx106.BoardModel, outdir: pathlib.Path) -> pathlib.Path:
    flags = [CONFIGS[config], *bm.cflags]
    inc = ["-isystem", str(lx106.LX / "libc" / "include"), "-I", str(lx106.LX), "-I", str(REPO / "cpp" / "draco")]
    objs = []
    for src, extra in ((REPO / "cpp" / "draco" / "draco.cpp", []),
                       (lx106.LX / "stream_harness.c", [f"-D{VARIANTS[variant]}"])):
        o = outdir / f"{src.stem}_{variant}.o"
        r = lx106.compile_one(src, o, flags + extra, inc)
        if r.returncode:
            raise lx106.Lx106Error(f"{src.name}: {r.stderr.strip()[-300:]}")
        objs.append(o)
    objs += lx106.runtime_objs(flags, outdir, cxx=True)
    elf = outdir / f"draco_{variant}_{config}.elf"
    r = lx106.link(objs, elf, cxx=True)
    if r.returncode:
        raise lx106.Lx106Error(f"link: {r.stderr.strip()[-300:]}")
    return elf


def keystreams(elf: pathlib.Path, bits: list, timing: lx106.Timing, max_insns: int = 200_000_000) -> list:
    """Per bit count: (bits, rc, keystream bytes, events, cycles) of the keystream call (the
    harness times init and keystream as two regions; init is left out, as in the study)."""
    tr = lx106.trace(elf, [(0, b) for b in bits], max_insns=max_insns)
    if tr.error or tr.status != 0:
        raise lx106.Lx106Error(tr.error or f"QEMU exit status {tr.status}")
    lines = [ln.split() for ln in tr.output.splitlines() if ln.startswith("ks ")]
    if len(lines) != len(bits) or len(tr.regions) != 2 * len(bits):
        raise lx106.Lx106Error(f"{len(lines)} results for {len(bits)} bit counts")
    out = []
    for f, reg in zip(lines, tr.regions[1::2]):
        ev = lx106.region_events(tr, reg)
        out.append((int(f[1]), int(f[2]), bytes.fromhex(f[3]) if len(f) > 3 else b"", ev, timing.cycles(ev)))
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--variant", choices=sorted(VARIANTS), action="append")
    ap.add_argument("--config", choices=sorted(CONFIGS), default="Os")
    ap.add_argument("--bits", type=int, action="append")
    a = ap.parse_args(argv)
    bits = a.bits or [1024, STUDY_NBITS]
    if any(not 1 <= b <= 32768 for b in bits):
        print("error: --bits: out of range 1..32768", file=sys.stderr)
        return 2
    try:
        lx106.check_tools()
        bm = lx106.load_board()
        with tempfile.TemporaryDirectory(prefix="lx106-draco-") as td:
            print("| variant | config | bits | cycles | cycles/bit | study ESP8266 cycles/bit | study / ours |")
            print("|---|---|---:|---:|---:|---:|---:|")
            for v in a.variant or ["ref", "fast"]:
                elf = build(v, a.config, bm, pathlib.Path(td))
                for n, rc, _, _, cyc in keystreams(elf, bits, bm.timing):
                    study = f"{STUDY_CPB:,.0f}" if n == STUDY_NBITS else ""
                    ratio = f"{STUDY_CPB / (cyc / n):.2f}x" if n == STUDY_NBITS and cyc else ""
                    print(f"| {v} | {a.config} | {n:,} | {cyc:,} | {cyc / n:.1f} | {study} | {ratio} |"
                          + ("" if rc == 0 else f" rc {rc}"))
    except lx106.Lx106Error as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
