#!/usr/bin/env python3
"""Microcontroller cost without a board: build the images, measure flash/RAM/stack, emulate
init + keystream, and write DIR/mcu_sizes.csv, DIR/mcu_counts.csv, DIR/mcu.md (each written
to a temporary file in DIR and renamed into place). Columns: mcu/README.md.

    python mcu/run.py --out DIR [--no-build] [--profiles Os,O3] [--nbits 1,8,128,1024,22464]

Runs offline once the toolchains are installed (mcu/setup.sh). Deterministic: the same
sources give the same files.
"""
from __future__ import annotations

import argparse
import csv
import dataclasses
import io
import json
import os
import pathlib
import sys
import tempfile
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import boardfile  # noqa: E402
import build  # noqa: E402
import emulate  # noqa: E402
from elftools.elf.constants import SH_FLAGS  # noqa: E402
from elftools.elf.elffile import ELFFile  # noqa: E402

# Block ciphers and AEADs run at fixed message sizes (whole blocks for every block size here):
# phases "init" (construct + set_key) and "encrypt" (ECB / AEAD encrypt + tag, empty AD).
BLOCK_NBITS = (128, 1024)
STUDY_NBITS = 22_464
NBITS = (1, 8, 128, 1024, STUDY_NBITS)
# The study: DRACO `full` (keystream + XOR, init excluded) of 22,464 bits on an 80 MHz
# ESP8266 (Xtensa LX106) took 282,891 us.
STUDY_US, STUDY_MHZ = 282_891.0, 80.0
STUDY_CPB = STUDY_US * STUDY_MHZ / STUDY_NBITS  # ~1007 cycles per keystream bit
TARGET_CPB_M0 = 100.0  # project target for DRACO's fast variant on the Cortex-M0+ model

# A target's core as the tables name it (data/boards.toml, [target.TRIPLE] core).
CORE = {t.triple: t.core for t in boardfile.load_targets().values()}


@dataclasses.dataclass
class Img:
    cipher: str
    implementation: str
    language: str
    image: str
    target: str
    profile: str
    elf: pathlib.Path
    baseline: pathlib.Path
    emulable: bool
    kind: str = "stream"


def images(profiles) -> list[Img]:
    out = []
    for t in build.RUST_TARGETS:
        for p in profiles:
            base = build.rust_elf(t, p, build.BASELINE)
            for im in build.RUST_IMAGES:
                out.append(Img(im.cipher, im.implementation, "Rust", im.name, t, p,
                               build.rust_elf(t, p, im.name), base, True, im.kind))
    for t in build.CPP_TARGETS:
        if t.name in LX106_TARGETS and lx106_ready():
            continue  # measured by the LX106 route (lx106_measure)
        d = build.cpp_dir(t.name)
        for v, (cipher, impl, _, _) in build.CPP_VARIANTS.items():
            out.append(Img(cipher, impl, "C++", v, t.name, "Os", d / f"{v}.elf", d / "baseline.elf", t.emulable))
    return out


# Xtensa LX106 targets: not Unicorn but QEMU's lx106 CPU and the board's LX106 model
# (mcu/lx106_images.py), with the board their counts stand for.
LX106_TARGETS = {t.triple: t.board for t in boardfile.load_targets().values() if t.model == "lx106"}


def _all_targets() -> dict:
    """emulate.TARGETS and the LX106 targets, each with its model, clock and board."""
    out = dict(emulate.TARGETS)
    boards = boardfile.load_boards()
    for triple, bid in LX106_TARGETS.items():
        b = boards[bid]
        out[triple] = emulate.Target(triple, CORE[triple], "lx106", b.mhz,
                                     f"{b.chip} @{b.mhz:g} MHz, board profile {bid} (QEMU + LX106 model)")
    return out


def lx106_ready() -> bool:
    """The LX106 toolchain and QEMU are installed (mcu/setup.sh)."""
    import lx106
    try:
        lx106.check_tools()
    except lx106.Lx106Error:
        return False
    return True


def lx106_measure(profiles, nbits, log, board=None, images=None) -> tuple[list, list]:
    """Size and count rows of the LX106 images (Os only: the board framework's -Os), in the
    columns of measure(): sizes image-minus-baseline with the painted stack, counts per phase
    with the board's LX106 model (timing_model lx106)."""
    import lx106_images
    size_rows, count_rows = [], []
    if "Os" not in profiles or not LX106_TARGETS or not lx106_ready():
        if LX106_TARGETS and "Os" in profiles:
            log("  xtensa-lx106-elf: xtensa-lx106-elf-gcc / qemu-system-xtensa missing: sizes from the object files only")
        return size_rows, count_rows
    outdir = build.target_dir() / "lx106"
    outdir.mkdir(parents=True, exist_ok=True)
    for triple, board_id in LX106_TARGETS.items():
        if board is not None:
            if board.triple != triple:
                continue
            board_id = board.id
        bm = lx106_images.lx106.load_board(board_id)
        ok, skipped = lx106_images.available(images)
        for img, why in skipped:
            log(f"  {triple:28} Os {img.image}: skipped ({why})")
        for img in ok:
            t0 = time.time()
            b = lx106_images.build(img, bm, outdir)
            ns = list(nbits) if img.kind == "stream" else list(BLOCK_NBITS)
            m = lx106_images.measure(b, bm, ns)
            lang = "C" if img.nist or not any(s.endswith(".cpp") for s in img.sources) else "C++"
            s, z = section_sizes(b.elf), section_sizes(b.baseline)
            d = {k: s[k] - z[k] for k in s}
            size_rows.append([img.cipher, img.implementation, lang, img.image, triple, CORE[triple], "Os",
                              "image-minus-baseline", d["text"], d["rodata"], d["data"], d["bss"], m.flash,
                              m.ram_static, m.stack, "yes"])
            common = [img.cipher, img.implementation, lang, img.image, triple, CORE[triple], "Os"]
            mhz = bm.mhz
            for i, n in enumerate(ns):
                phases = [("init", 0, m.init[n])] if i == 0 else []
                phases.append((img.phase, n, m.message[n]))
                for phase, nb, cyc in phases:
                    insns = m.init_insns[n] if phase == "init" else m.events[n]["insns"]
                    count_rows.append(common + [phase, nb, "instructions", insns, "instructions", "lx106"])
                    if phase != "init":
                        if nb:
                            count_rows.append(common + [phase, nb, "instructions_per_bit",
                                                        f"{m.events[n]['insns'] / nb:.2f}", "instructions/bit", "lx106"])
                    count_rows.append(common + [phase, nb, "cycles_est", cyc, "cycles", "lx106"])
                    count_rows.append(common + [phase, nb, "time_us_est", f"{cyc / mhz:.2f}", f"us @ {mhz:g} MHz",
                                                "lx106"])
                    if phase != "init" and nb:
                        count_rows.append(common + [phase, nb, "cycles_per_bit_est", f"{cyc / nb:.2f}", "cycles/bit",
                                                    "lx106"])
                full = m.init[n] + m.message[n]
                count_rows.append(common + ["full", n, "cycles_est", full, "cycles", "lx106"])
                count_rows.append(common + ["full", n, "time_us_est", f"{full / mhz:.2f}", f"us @ {mhz:g} MHz", "lx106"])
                if n:
                    count_rows.append(common + ["full", n, "cycles_per_bit_est", f"{full / n:.2f}", "cycles/bit",
                                                "lx106"])
            count_rows.append(common + ["init+" + img.phase, ns[-1], "stack_bytes", m.stack, "bytes", ""])
            for r_ in count_rows:
                if len(r_) == len(COUNT_COLS) - 1:
                    r_.append(board_id)
            log(f"  {triple:28} Os {img.image:11} {lang:4} {time.time() - t0:6.1f} s (QEMU, lx106 model)")
    return size_rows, count_rows


def section_sizes(path: pathlib.Path) -> dict:
    """Allocated bytes by kind: text (executable), rodata (other read-only), data, bss."""
    s = {"text": 0, "rodata": 0, "data": 0, "bss": 0}
    with open(path, "rb") as f:
        for sec in ELFFile(f).iter_sections():
            fl = sec["sh_flags"]
            if not fl & SH_FLAGS.SHF_ALLOC or sec["sh_size"] == 0:
                continue
            if sec["sh_type"] == "SHT_NOBITS":
                s["bss"] += sec["sh_size"]
            elif fl & SH_FLAGS.SHF_WRITE:
                s["data"] += sec["sh_size"]
            elif fl & SH_FLAGS.SHF_EXECINSTR:
                s["text"] += sec["sh_size"]
            else:
                s["rodata"] += sec["sh_size"]
    return s


SIZE_COLS = ["cipher", "implementation", "language", "image", "target", "core", "profile", "method",
             "text", "rodata", "data", "bss", "flash_bytes", "ram_static_bytes", "stack_bytes",
             "emulated"]
COUNT_COLS = ["cipher", "implementation", "language", "image", "target", "core", "profile",
              "phase", "nbits", "metric", "value", "unit", "timing_model", "board"]


def boards_used() -> dict:
    """The board profile (data/boards.toml) each emulated target stands for."""
    boards = emulate.load_boards()
    return {t: boards[b] for t, b in emulate.DEFAULT_BOARD.items()}


def measure(imgs, nbits, log, board=None) -> tuple[list, list]:
    """Size and count rows of the Unicorn images; `board` (a Board) replaces its target's
    counts board (--board)."""
    size_rows, count_rows = [], []
    boards = boards_used()
    if board is not None:
        boards[board.triple] = board
    base_stack: dict = {}
    outputs: dict = {}
    for im in imgs:
        s, b = section_sizes(im.elf), section_sizes(im.baseline)
        d = {k: s[k] - b[k] for k in s}
        stack = ""
        if im.emulable:
            t0 = time.time()
            img = emulate.load_image(str(im.elf))
            board = boards.get(im.target)
            em = emulate.Emulator(img, im.target, board=board)
            tgt = emulate.TARGETS[im.target]
            key = (im.target, im.profile, im.language, str(im.baseline))
            if key not in base_stack:
                base_stack[key] = emulate.Emulator(emulate.load_image(str(im.baseline)), im.target).run(0).stack_bytes
            stacks = []
            common = [im.cipher, im.implementation, im.language, im.image, im.target, CORE[im.target], im.profile]
            ns = nbits if im.kind == "stream" else BLOCK_NBITS
            main_phase = "keystream" if im.kind == "stream" else "encrypt"
            for i, n in enumerate(ns):
                r = em.run(n)
                if r.rc != (0, 0):
                    raise SystemExit(f"{im.elf}: lwc_init/lwc_keystream returned {r.rc}")
                prev = outputs.setdefault((im.cipher, im.implementation if im.language == "Rust" else im.language, n), r.out)
                if im.language == "Rust" and prev != r.out:
                    raise SystemExit(f"{im.elf}: keystream differs between targets/profiles for {n} bits")
                stacks.append(r.stack_bytes)
                model = tgt.model or ""
                phases = [("init", 0, r.init)] if i == 0 else []
                phases.append((main_phase, n, r.keystream))
                for phase, nb, ph in phases:
                    count_rows.append(common + [phase, nb, "instructions", ph.insns, "instructions", model])
                    if phase != "init" and nb:
                        count_rows.append(common + [phase, nb, "instructions_per_bit", f"{ph.insns / nb:.2f}", "instructions/bit", model])
                    if ph.cycles is not None:
                        count_rows.append(common + [phase, nb, "cycles_est", ph.cycles, "cycles", model])
                        count_rows.append(common + [phase, nb, "time_us_est", f"{ph.cycles / tgt.mhz:.2f}",
                                                    f"us @ {tgt.mhz:g} MHz", model])
                        if phase != "init" and nb:
                            count_rows.append(common + [phase, nb, "cycles_per_bit_est", f"{ph.cycles / nb:.2f}",
                                                        "cycles/bit", model])
                # `full`: init + keystream of this request as one count (a fresh init per request,
                # as the study's per-message runs); per-bit figures divide by the keystream bits
                full_i = r.init.insns + r.keystream.insns
                count_rows.append(common + ["full", n, "instructions", full_i, "instructions", model])
                if n:
                    count_rows.append(common + ["full", n, "instructions_per_bit", f"{full_i / n:.2f}", "instructions/bit", model])
                if r.init.cycles is not None:
                    full_c = r.init.cycles + r.keystream.cycles
                    count_rows.append(common + ["full", n, "cycles_est", full_c, "cycles", model])
                    count_rows.append(common + ["full", n, "time_us_est", f"{full_c / tgt.mhz:.2f}", f"us @ {tgt.mhz:g} MHz", model])
                    if n:
                        count_rows.append(common + ["full", n, "cycles_per_bit_est", f"{full_c / n:.2f}", "cycles/bit", model])
                count_rows.append(common + ["init+keystream", n, "stack_bytes", r.stack_bytes, "bytes", ""])
            for r_ in count_rows:
                if len(r_) == len(COUNT_COLS) - 1:
                    r_.append(board.id if board else "")
            stack = max(stacks)
            log(f"  {im.target:28} {im.profile} {im.image:11} {im.language:4} {time.time() - t0:6.1f} s")
        size_rows.append([im.cipher, im.implementation, im.language, im.image, im.target, CORE[im.target],
                          im.profile, "image-minus-baseline", d["text"], d["rodata"], d["data"], d["bss"],
                          d["text"] + d["rodata"] + d["data"], d["data"] + d["bss"], stack,
                          "yes" if im.emulable else "no"])
    # C++ object-file sizes (per variant after section GC), as the compilers emit them
    for t in build.CPP_TARGETS:
        if board is not None and t.name != board.triple or not (build.cpp_dir(t.name) / "draco_ref.o").exists():
            continue
        for v, (cipher, impl, _, _) in build.CPP_VARIANTS.items():
            o = section_sizes(build.cpp_dir(t.name) / f"{v}.o")
            size_rows.append([cipher, impl, "C++", v, t.name, CORE[t.name], "Os", "object-gc",
                              o["text"], o["rodata"], o["data"], o["bss"], o["text"] + o["rodata"] + o["data"],
                              o["data"] + o["bss"], "", "no"])
    return size_rows, count_rows


def _csv(cols, rows) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(cols)
    w.writerows(rows)
    return buf.getvalue()


def _get(count_rows, **kw):
    out = {}
    for r in count_rows:
        d = dict(zip(COUNT_COLS, r))
        if all(str(d[k]) == str(v) for k, v in kw.items()):
            out[(d["cipher"], d["implementation"], d["language"], d["target"], d["profile"], int(d["nbits"]))] = d["value"]
    return out


def markdown(size_rows, count_rows, nbits, sizes_only=False) -> str:
    tgts = _all_targets()
    L = ["# Microcontroller cost (emulated; no board)", "",
         "Generated by `mcu/run.py`; method, timing models and columns in `mcu/README.md`. "
         "Instruction counts are exact (Unicorn); cycles are **estimates** from a per-instruction "
         "timing model (Cortex-M0+: Arm TRM table, single-cycle multiplier as on the RP2040; "
         "RV32IMC: stated assumptions for the ESP32-C3; Cortex-M4F: Arm Cortex-M4 TRM table, "
         "branch refill P = 2, loads not pipelined). "
         "Xtensa LX106 (ESP8266): the C/C++ images in QEMU's lx106 CPU with the LX106 cycle model "
         "(mcu/lx106/README.md; warm steady state, no flash-cache misses; Rust has no upstream LX106 target).", ""]
    if sizes_only:
        L += ["Preset `sizes`: flash, RAM and stack only (one short emulated call per image for the "
              "stack depth); the emulated-count tables come from the `counts` preset.", ""]
        count_rows = [r for r in count_rows if False]
    # --- headline: DRACO vs the study
    cpb = _get(count_rows, metric="cycles_per_bit_est", phase="keystream", nbits=STUDY_NBITS)
    us = _get(count_rows, metric="time_us_est", phase="keystream", nbits=STUDY_NBITS)
    ipb = _get(count_rows, metric="instructions_per_bit", phase="keystream", nbits=STUDY_NBITS)
    L += [] if sizes_only else ["## DRACO, 22,464-bit keystream (the study's `full` payload) vs the study", "",
          f"Study: 282,891 us on an 80 MHz ESP8266 = **{STUDY_CPB:,.0f} cycles/bit** (measured, `full` = keystream + XOR, init excluded). "
          f"Project target: DRACO fast <= {TARGET_CPB_M0:.0f} est. cycles/bit on the Cortex-M0+ model.", "",
          "| implementation | language | target | profile | instr/bit | est. cycles/bit | est. time | study cycles/bit ÷ this |",
          "|---|---|---|---|---:|---:|---:|---:|"]
    for k in sorted(ipb):
        c, impl, lang, tgt, prof, _ = k
        if c != "DRACO":
            continue
        cyc = cpb.get(k)
        board = tgts[tgt].board
        L.append(f"| {impl} | {lang} | {CORE[tgt]} | {prof} | {float(ipb[k]):.1f} | "
                 + (f"{float(cyc):.1f} | {float(us[k]):,.0f} us ({board}) | {STUDY_CPB / float(cyc):.2f}× |" if cyc
                    else "— | — | — |"))
    # --- `full` (init + keystream as one count) vs the study, nearest emulated core
    fcpb = _get(count_rows, metric="cycles_per_bit_est", phase="full", nbits=STUDY_NBITS)
    fus = _get(count_rows, metric="time_us_est", phase="full", nbits=STUDY_NBITS)
    if fcpb:
        L += ["", "### DRACO `full` (init + keystream, one count) over 22,464 bits vs the study's ESP8266", "",
              "The ESP8266 itself (Xtensa LX106: QEMU's lx106 CPU with the LX106 model, the C++ DRACO; "
              "the study ran a Rust DRACO, and Rust has no upstream LX106 target) first, then the other "
              "emulated cores (RV32IMC: the ESP32-C3 model; Cortex-M0+). Cycles per keystream bit, estimated, "
              "warm; the study's figure is "
              f"measured on silicon (282,891 µs × 80 MHz / 22,464 bits = {STUDY_CPB:,.0f}) and, as we read it, "
              "excludes init, so including init here is the conservative side.", "",
              "| implementation | language | core | profile | est. cycles/bit (full) | est. time | study ÷ this |",
              "|---|---|---|---|---:|---:|---:|"]
        order = {**{t: 0 for t in LX106_TARGETS}, "riscv32imc-unknown-none-elf": 1, "thumbv6m-none-eabi": 2}
        for k in sorted(fcpb, key=lambda k: (order.get(k[3], 9), k)):
            c, impl, lang, tgt, prof, _ = k
            if c != "DRACO":
                continue
            board = tgts[tgt].board
            L.append(f"| {impl} | {lang} | {CORE[tgt]} | {prof} | {float(fcpb[k]):.1f} | "
                     f"{float(fus[k]):,.0f} us ({board}) | {STUDY_CPB / float(fcpb[k]):.1f}× |")
    fast_m0 = [float(v) for (c, impl, lang, tgt, prof, _), v in cpb.items()
               if c == "DRACO" and impl == "rust-fast" and tgt == "thumbv6m-none-eabi"]
    if fast_m0:
        best = min(fast_m0)
        L += ["", f"DRACO rust-fast on the Cortex-M0+ model: best {best:.1f} est. cycles/bit -> target "
              f"<= {TARGET_CPB_M0:.0f}: **{'met' if best <= TARGET_CPB_M0 else 'NOT met'}**."]
    # --- flash / RAM
    L += ["", "## Flash and RAM (bytes; image minus baseline, FELICS-style)", "",
          "flash = .text + .rodata (+ .data initial values) of the cipher image minus the baseline image; "
          "RAM = .data + .bss minus baseline; stack = deepest stack use of init + keystream measured by "
          "stack painting in emulation (whole call, entry point included; — = not emulated).", ""]
    targets = [t for t in CORE if any(r[4] == t for r in size_rows)]
    for prof in ("Os", "O3"):
        rows = [r for r in size_rows if r[6] == prof and r[7] == "image-minus-baseline"]
        if not rows:
            continue
        L += [f"### profile {prof}" + (" (opt-level \"s\" / g++ -Os)" if prof == "Os" else " (opt-level 3, Rust only)"), "",
              "| cipher | implementation | language | " + " | ".join(f"{CORE[t]} flash / RAM / stack" for t in targets) + " |",
              "|---|---|---|" + "---:|" * len(targets)]
        keys = []
        for r in rows:
            if (r[0], r[1], r[2]) not in keys:
                keys.append((r[0], r[1], r[2]))
        for k in keys:
            cells = []
            for t in targets:
                m = [r for r in rows if (r[0], r[1], r[2]) == k and r[4] == t]
                cells.append(f"{m[0][12]:,} / {m[0][13]:,} / {m[0][14] if m[0][14] != '' else '—'}" if m else "")
            L.append(f"| {k[0]} | {k[1]} | {k[2]} | " + " | ".join(cells) + " |")
        L.append("")
    obj = [r for r in size_rows if r[7] == "object-gc"]
    if obj:
        L += ["### C++ DRACO from the object files (g++ -Os, after section GC; no libgcc / memcpy)", "",
              "| implementation | target | .text | .rodata | flash |", "|---|---|---:|---:|---:|"]
        for r in obj:
            L.append(f"| {r[1]} | {CORE[r[4]]} | {r[8]:,} | {r[9]:,} | {r[12]:,} |")
        L.append("")
    # --- counts
    L += [] if sizes_only else ["## Emulated init and keystream (profile Os)", "",
          "init: instructions / est. cycles (est. µs). Keystream: est. cycles per keystream bit "
          "for each request length, fresh init before each.", ""]
    ins = _get(count_rows, metric="instructions", phase="init")
    icyc = _get(count_rows, metric="cycles_est", phase="init")
    ius = _get(count_rows, metric="time_us_est", phase="init")
    kcpb = _get(count_rows, metric="cycles_per_bit_est", phase="keystream")
    kipb = _get(count_rows, metric="instructions_per_bit", phase="keystream")
    for t in [t for t in tgts if any(k[3] == t for k in ins)]:
        unit = "cycles/bit" if tgts[t].model else "instr/bit"
        L += [f"### {CORE[t]} ({tgts[t].board})", "",
              "| cipher | implementation | language | init instr | init est. cycles (µs) | "
              + " | ".join(f"{n:,} bit{'s' if n != 1 else ''} {unit}" for n in nbits) + " |",
              "|---|---|---|---:|---:|" + "---:|" * len(nbits)]
        stream_keys = {k[:5] for k in kipb}
        for k in sorted(k for k in ins if k[3] == t and k[4] == "Os" and k[:5] in stream_keys):
            c, impl, lang = k[:3]
            cyc = f"{int(icyc[k]):,} ({float(ius[k]):,.0f})" if k in icyc else "—"
            src = kcpb if tgts[t].model else kipb
            cells = [f"{float(src[(c, impl, lang, t, 'Os', n)]):,.1f}" if (c, impl, lang, t, "Os", n) in src else ""
                     for n in nbits]
            L.append(f"| {c} | {impl} | {lang} | {int(ins[k]):,} | {cyc} | " + " | ".join(cells) + " |")
        L.append("")
        # `full` = init + keystream as one count, per keystream bit (init dominates short requests)
        fsrc = _get(count_rows, metric="cycles_per_bit_est" if tgts[t].model else "instructions_per_bit",
                    phase="full", profile="Os")
        L += [f"`full` (init + keystream, one count) on the {CORE[t]}, {unit} of keystream:", "",
              "| cipher | implementation | language | " + " | ".join(f"{n:,} bit{'s' if n != 1 else ''}" for n in nbits) + " |",
              "|---|---|---|" + "---:|" * len(nbits)]
        for k in sorted(k for k in ins if k[3] == t and k[4] == "Os" and k[:5] in stream_keys):
            c, impl, lang = k[:3]
            cells = [f"{float(fsrc[(c, impl, lang, t, 'Os', n)]):,.1f}" if (c, impl, lang, t, "Os", n) in fsrc else ""
                     for n in nbits]
            L.append(f"| {c} | {impl} | {lang} | " + " | ".join(cells) + " |")
        L.append("")
    # --- block ciphers and AEADs
    ecpb = _get(count_rows, metric="cycles_per_bit_est", phase="encrypt", profile="Os")
    eipb = _get(count_rows, metric="instructions_per_bit", phase="encrypt", profile="Os")
    if eipb:
        L += ["## Block ciphers and AEADs (profile Os)", "",
              "init = construct + `set_key`; encrypt = ECB over whole blocks (block ciphers) or AEAD "
              "encryption with empty associated data plus the tag, of a 128-bit and a 1024-bit message. "
              "Est. cycles per message byte.", ""]
        for t in [t for t in tgts if any(k[3] == t for k in eipb)]:
            has = tgts[t].model is not None
            src = ecpb if has else eipb
            L += [f"### {CORE[t]} ({tgts[t].board})", "",
                   "| cipher | implementation | init instr | init est. cycles | "
                   + " | ".join(f"{n} bits, {'cycles' if has else 'instr'}/byte" for n in BLOCK_NBITS) + " |",
                   "|---|---|---:|---:|" + "---:|" * len(BLOCK_NBITS)]
            for k in sorted({k[:5] for k in eipb if k[3] == t}):
                c, impl, lang, _, prof = k
                ii = ins.get(k + (0,))
                ic = icyc.get(k + (0,))
                cells = [f"{8 * float(src[k + (n,)]):,.1f}" if k + (n,) in src else "" for n in BLOCK_NBITS]
                L.append(f"| {c} | {impl} | {int(ii):,} | {f'{int(ic):,}' if ic is not None else '—'} | " + " | ".join(cells) + " |")
            L.append("")
    return "\n".join(L) + "\n"


def write_atomic(path: pathlib.Path, text: str) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix="." + path.name + ".", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
            f.write(text)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp creates 0600; give the usual file mode
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True, type=pathlib.Path)
    ap.add_argument("--no-build", action="store_true", help="use the images already built")
    ap.add_argument("--profiles", default="Os,O3")
    ap.add_argument("--nbits", default=",".join(map(str, NBITS)))
    ap.add_argument("--sizes-only", action="store_true",
                    help="flash/RAM/stack only: mcu_sizes.csv + mcu.md (one 128-bit request per image for the stack)")
    ap.add_argument("--board", help="only the images of this board's target, counted with this board's profile "
                                    "(a [board.ID] of data/boards.toml; default: every target, each with its counts' board)")
    a = ap.parse_args(argv)
    if a.sizes_only:
        a.nbits = "128"
    profiles = [p for p in a.profiles.split(",") if p]
    nbits = [int(x) for x in a.nbits.split(",") if x]
    log = lambda m: print(m, file=sys.stderr, flush=True)  # noqa: E731
    boards = boardfile.load_boards()
    only = None
    if a.board is not None:
        if a.board not in boards:
            print(f"error: --board: '{a.board}' is not a board of data/boards.toml ({', '.join(boards)})",
                  file=sys.stderr)
            return 2
        only = boards[a.board]
        if only.triple not in build.RUST_TARGETS and only.triple not in LX106_TARGETS \
                and not any(c.name == only.triple for c in build.CPP_TARGETS):
            print(f"error: --board: {a.board}'s target {only.triple} has no images here", file=sys.stderr)
            return 2
    lx_only = only is not None and only.triple in LX106_TARGETS
    if not a.no_build and not lx_only:
        log("building images ...")
        build.build_all(profiles)
    log("measuring ...")
    imgs = [] if lx_only else [im for im in images(profiles) if only is None or im.target == only.triple]
    sizes, counts = measure(imgs, nbits, log, board=only)
    if only is None or lx_only:
        lx_sizes, lx_counts = lx106_measure(profiles, nbits, log, board=only)
        sizes, counts = sizes + lx_sizes, counts + lx_counts
    a.out.mkdir(parents=True, exist_ok=True)
    write_atomic(a.out / "mcu_sizes.csv", _csv(SIZE_COLS, sizes))
    if not a.sizes_only:
        write_atomic(a.out / "mcu_counts.csv", _csv(COUNT_COLS, counts))
    write_atomic(a.out / "mcu.md", markdown(sizes, counts, nbits, a.sizes_only))
    if not a.sizes_only:  # read by `lwcbench mcu` into run.json
        used = boards_used()
        if only is not None:
            used = {only.triple: only}
        write_atomic(a.out / "boards.json", json.dumps(
            {t: dataclasses.asdict(b) for t, b in used.items()}, indent=1) + "\n")
    log(f"wrote {a.out}/mcu_sizes.csv{'' if a.sizes_only else ', mcu_counts.csv'}, mcu.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
