#!/usr/bin/env python3
"""Reproduce a NIST LWC microcontroller AEAD or hash table in emulation, ours beside the published one.

For one board (`--board mkrzero|nano33ble`), one primitive (`--primitive aead|hash`) and one
compiler configuration (`--config o2`), this reads the board's published table
(benchmarks/<board>-aead-summary.csv or -hash-summary.csv of the shared NIST LWC tree), builds
every implementation it lists for that config from implementations/ with arm-none-eabi-gcc and
mcu/nistlwc/harness.c (harness_hash.c), emulates every enc(x:y) / h(x) cell of the table with
the board's profile (data/boards.toml) and writes, into --out (each file atomically, run.json
last):

  nist_lwc_cells.csv   one row per implementation x cell: published / emulated cycles, error %,
                       instructions, fetch-stall cycles
  nist_lwc_impls.csv   one row per implementation: per-byte slope (enc(0:1024)-enc(0:128))/896,
                       h(1024)-h(128) for hashes, and the 1024-byte total, published vs ours,
                       error %, instructions per byte,
                       kind by where the cycles go (asm / inline-asm when at least half the
                       1024-byte cell's cycles run in functions assembled from .S files or
                       holding inline assembly the compiler emitted for this core; c else),
                       ciphertext cross-check against the other implementations and against
                       the variant's reference built for the host; failures (build, crash,
                       non-zero return, wrong ciphertext) with their reason
  nist_lwc.md          the same as tables, medians, and evidence for every slope beyond +-20 %
  run.json             compiler version, flags, board profile, source tree, timing

The shared tree: $LWCBENCH_NIST_LWC, else ../shared/nist-lwc beside the repository, else
/work/shared/nist-lwc. It is test data: read at run time, nothing of it is copied here.
"""
from __future__ import annotations

import argparse
import array
import concurrent.futures
import csv
import dataclasses
import fnmatch
import hashlib
import io
import shutil
import json
import os
import pathlib
import re
import statistics
import subprocess
import sys
import tempfile
import time
import zlib

MCU = pathlib.Path(__file__).resolve().parent
REPO = MCU.parent
sys.path.insert(0, str(MCU))

import emulate  # noqa: E402
from run import _csv, write_atomic  # noqa: E402
from elftools.elf.elffile import ELFFile  # noqa: E402

# run as a script, this module is __main__: lx106_nist's `import nistlwc` must get this same one
# (its Fail is the one main() catches)
sys.modules.setdefault("nistlwc", sys.modules[__name__])

BOARD_TABLE = {"mkrzero": "mkrzero", "nano33ble": "nano33ble", "due": "dueUSB"}  # board id -> table prefix
# Xtensa boards: QEMU and the LX106 model (mcu/lx106_nist.py), not Unicorn
LX106_BOARDS = {b.lx106.table for b in emulate.load_boards().values() if b.lx106 is not None}
# Tables timed with micros() (src/lwc-benchmarking/src/experiment_timing.cpp: Due, Uno, ...) give
# microseconds; they are compared in cycles at the board's clock (1 us = mhz cycles).
MICROS_TABLES = {"dueUSB"}
CPU_FLAGS = {
    "m0plus": ["-mcpu=cortex-m0plus", "-mthumb", "-mfloat-abi=soft"],
    # the Arduino mbed core for the Nano 33 BLE builds with the FPU, soft-float calling convention
    "m4": ["-mcpu=cortex-m4", "-mthumb", "-mfloat-abi=softfp", "-mfpu=fpv4-sp-d16"],
    "m3": ["-mcpu=cortex-m3", "-mthumb", "-mfloat-abi=soft"],
}
CONFIGS = {"os": "-Os", "o1": "-O1", "o2": "-O2", "o3": "-O3"}
COMMON_FLAGS = ["-std=gnu11", "-ffunction-sections", "-fdata-sections", "-fno-common", "-w"]
CXX_FLAGS = ["-std=gnu++17", "-fno-exceptions", "-fno-rtti", "-ffunction-sections", "-fdata-sections", "-w"]
SLOPE_LO, SLOPE_HI = (0, 128), (0, 1024)
SHORT_SLOPE_HI = (0, 512)  # tables whose longest message is 512 bytes (the Due's)
FLAG_PCT = 20.0
SLOPE_CELLS = [SLOPE_LO, SLOPE_HI]
# primitive -> (table suffix, implementations folder, cell column, harness, framework glue source)
PRIMITIVES = {
    "aead": ("aead-summary", "crypto_aead", re.compile(r"^enc\((\d+):(\d+)\)$"), "harness.c", "lwc_crypto_aead"),
    "hash": ("hash-summary", "crypto_hash", re.compile(r"^h\((\d+)\)$"), "harness_hash.c", "lwc_crypto_hash"),
}


def opt_flags(config: str) -> list:
    """The optimisation flags of a config as the published tables' compilers applied them. The
    tables were built with the PlatformIO ARM toolchains of their day (GCC before 12; the framework
    pins none, PROVENANCE.md), whose -O2 does not vectorize. GCC 12's -O2 does ("-O2 now enables
    -ftree-vectorize with the very-cheap cost model", GCC 12 release notes) and turns byte loops
    into word operations on cores without SIMD: the Nano 33 BLE's sparkle `opt` rows ran 35 %
    faster than the board with it, 3 % slower without. -O3 vectorized before GCC 12 too."""
    return [CONFIGS[config]] + ([] if config == "o3" else ["-fno-tree-vectorize"])


def cell_label(primitive: str, xy) -> str:
    return f"h({xy[1]})" if primitive == "hash" else f"enc({xy[0]}:{xy[1]})"
DEFAULT_MAX_INSNS = 300_000_000


class Fail(Exception):
    """Bad input or environment: one `error:` line, non-zero exit."""


def shared_dir() -> pathlib.Path:
    env = os.environ.get("LWCBENCH_NIST_LWC")
    cands = [pathlib.Path(env)] if env else [REPO.parent / "shared" / "nist-lwc", pathlib.Path("/work/shared/nist-lwc")]
    for c in cands:
        if (c / "benchmarks").is_dir() and (c / "implementations").is_dir():
            return c
    raise Fail(f"NIST LWC tree not found (tried {', '.join(map(str, cands))}; set LWCBENCH_NIST_LWC)")


# --- published tables ---------------------------------------------------------------------

@dataclasses.dataclass
class Row:
    submission: str
    variant: str
    implementation: str
    config: str
    flash: int | None
    cells: dict  # (ad, msg) -> cycles or None ('-'); hashes: (0, msg)
    primitive: str = "aead"

    @property
    def key(self) -> str:
        return f"{self.submission}/{self.variant}/{self.implementation}"


def _cell_value(text: str, where: str) -> int | None:
    t = text.strip()
    if t in ("-", ""):
        return None
    try:
        v = float(t)
    except ValueError:
        raise Fail(f"{where}: not a number: {t!r}") from None
    if v < 0 or v != v or v > 1e12:
        raise Fail(f"{where}: out of range: {t!r}")
    return int(round(v))


def parse_table(text: str, name: str = "table", primitive: str = "aead") -> list[Row]:
    """Parse a published <board>-aead-summary.csv (or -hash-summary.csv); '-' cells are None.
    Errors name file and line."""
    cell_re = PRIMITIVES[primitive][2]
    rd = csv.reader(io.StringIO(text))
    try:
        header = next(rd)
    except StopIteration:
        raise Fail(f"{name}: empty file") from None
    need = ["submission", "variant", "implementation", "config"]
    for n in need:
        if n not in header:
            raise Fail(f"{name}: line 1: missing column {n!r}")
    col = {h: i for i, h in enumerate(header)}
    enc = [(i, (0, *map(int, m.groups()))[-2:]) for i, h in enumerate(header) if (m := cell_re.match(h.strip()))]
    if not enc:
        raise Fail(f"{name}: line 1: no {'h(x)' if primitive == 'hash' else 'enc(x:y)'} columns")
    rows = []
    for ln, r in enumerate(rd, start=2):
        if not r or all(not c.strip() for c in r):
            continue
        if len(r) != len(header):
            raise Fail(f"{name}: line {ln}: {len(r)} fields, header has {len(header)}")
        where = f"{name}: line {ln}"
        flash = _cell_value(r[col["flash"]], where + ": flash") if "flash" in col else None
        cells = {xy: _cell_value(r[i], f"{where}: {header[i]}") for i, xy in enc}
        rows.append(Row(r[col["submission"]], r[col["variant"]], r[col["implementation"]],
                        r[col["config"]].strip().lower(), flash, cells, primitive))
    return rows


def slope(cells: dict, hi_cell=None) -> float | None:
    hi_cell = hi_cell or SLOPE_HI
    lo, hi = cells.get(SLOPE_LO), cells.get(hi_cell)
    if lo is None or hi is None:
        return None
    return (hi - lo) / (hi_cell[1] - SLOPE_LO[1])


def err_pct(ours, pub):
    if ours is None or pub in (None, 0):
        return None
    return 100.0 * (ours - pub) / pub


# --- building -----------------------------------------------------------------------------

SRC_EXT = (".c", ".S", ".s", ".cpp")
SKIP_SRC = {"genkat_aead.c", "genkat_hash.c", "printstate.c"}


def impl_dir(root: pathlib.Path, row: Row) -> pathlib.Path:
    """implementations/SUBMISSION/crypto_aead (crypto_hash)/VARIANT/IMPL; the tables spell some
    submissions without the folder's hyphen (photonbeetle, giftcofb), so the variant folder is looked up."""
    prim = PRIMITIVES[row.primitive][1]
    d = root / "implementations" / row.submission / prim / row.variant / row.implementation
    if not d.is_dir():
        found = sorted((root / "implementations").glob(f"*/{prim}/{row.variant}/{row.implementation}"))
        if found:
            return found[0]
    return d


def impl_kind(d: pathlib.Path, asm_text_bytes: int, inline_insns: int = 0) -> str:
    """The kind by what was built, before emulation says where the cycles go: asm when assembly
    sources assembled to code for this core (rhys-style trees carry .S files for other cores,
    #if-guarded to nothing), inline-asm when the compiler emitted inline-assembly instructions (an
    asm statement guarded out for another architecture emits none), c otherwise. `d` is kept for
    the callers that classify before building."""
    if asm_text_bytes:
        return "asm"
    return "inline-asm" if inline_insns else "c"


# GCC wraps each asm statement it emits in `@ LINE "file" 1` ... `@ 0 "" 2` (`#` on Xtensa).
_INLINE_OPEN = re.compile(r'^\s*[@#] \d+ "[^"]*" 1\s*$')
_INLINE_CLOSE = re.compile(r'^\s*[@#] 0 "" 2\s*$')
_LABEL = re.compile(r"^([A-Za-z_$][\w.$]*):")


def inline_asm_functions(s_text: str) -> dict:
    """{function: inline-assembly instructions in its compiled code} from GCC's assembler output."""
    out: dict = {}
    fn, inside = None, False
    for ln in s_text.splitlines():
        if inside:
            t = ln.strip()
            if _INLINE_CLOSE.match(ln):
                inside = False
            elif t and fn and not t.startswith(("@", "#", ".", "//", "/*")) and not re.match(r"^[\w.$]+:$", t):
                out[fn] = out.get(fn, 0) + 1
            continue
        if _INLINE_OPEN.match(ln):
            inside = True
        elif m := _LABEL.match(ln):
            fn = m.group(1)
    return out


def defined_functions(obj: pathlib.Path) -> set:
    """Names of the code symbols an object defines (its executable sections), mapping symbols aside."""
    names = set()
    with open(obj, "rb") as f:
        elf = ELFFile(f)
        execs = {i for i, sec in enumerate(elf.iter_sections())
                 if sec["sh_type"] == "SHT_PROGBITS" and sec["sh_flags"] & 0x4}
        symtab = elf.get_section_by_name(".symtab")
        for sym in (symtab.iter_symbols() if symtab else []):
            shndx = sym["st_shndx"]
            if (isinstance(shndx, int) and shndx in execs and sym.name and not sym.name.startswith(("$", ".L"))
                    and sym["st_info"]["type"] in ("STT_FUNC", "STT_NOTYPE")):
                names.add(sym.name)
    return names


@dataclasses.dataclass
class Origin:
    """Which functions of an image come from assembly: .S/.s sources, or C with emitted inline asm."""
    asm: set = dataclasses.field(default_factory=set)
    inline: dict = dataclasses.field(default_factory=dict)


def classify_by_cycles(origin: Origin, prof: dict | None, img, static_kind: str) -> tuple:
    """(kind, share of the profiled cell's cycles in assembly-origin functions). "asm" / "inline-asm"
    when at least half the cycles run in such functions (the larger of the two names it), "c" else;
    without a profile (the image did not run) the kind by what was built."""
    if not prof:
        return static_kind, None
    total = sum(v[1] for v in prof.values()) or 1
    asm = inl = 0
    for addr, (_, cyc, _) in prof.items():
        name = _symbol_at(img, addr).split("+")[0]
        if name in origin.asm:
            asm += cyc
        elif name in origin.inline:
            inl += cyc
    share = (asm + inl) / total
    if share < 0.5:
        return "c", share
    return ("asm" if asm >= inl else "inline-asm"), share


def text_bytes(obj: pathlib.Path) -> int:
    with open(obj, "rb") as f:
        return sum(sec["sh_size"] for sec in ELFFile(f).iter_sections()
                   if sec["sh_type"] == "SHT_PROGBITS" and sec["sh_flags"] & 0x4)  # SHF_EXECINSTR


def compiler_version(cc: str) -> str:
    try:
        return subprocess.run([cc, "--version"], capture_output=True, text=True, check=True).stdout.splitlines()[0]
    except (OSError, subprocess.CalledProcessError, IndexError) as e:
        raise Fail(f"{cc} not usable ({e}); install the cross toolchain with mcu/setup.sh") from None


def first_error(stderr: str) -> str:
    """The compiler's / linker's own reason, one line."""
    lines = [ln.strip() for ln in stderr.splitlines() if ln.strip()]
    for pat in (r"undefined reference|multiple definition|will not fit|overflowed", r"\berror:", r"\bError:", r"\bfatal\b"):
        for ln in lines:
            if re.search(pat, ln) and "collect2" not in ln:
                return re.sub(r"^.*?/crypto_(aead|hash)/", "", ln)[:300]
    return (lines[-1] if lines else "build failed")[:300]


def build(root: pathlib.Path, row: Row, core: str, config: str, outdir: pathlib.Path,
          published_toolchain: bool = True) -> tuple:
    """(elf or None, failure reason, kind by what was built, Origin). `published_toolchain`: the
    optimisation flags as the published tables' compilers applied them (opt_flags), else this GCC's
    own meaning of the config."""
    d = impl_dir(root, row)
    if not d.is_dir():
        return None, f"implementation folder missing: {d}", "?", Origin()
    srcs = sorted(p for p in d.iterdir() if p.is_file() and p.suffix in SRC_EXT and p.name not in SKIP_SRC)
    fw = root / "src" / "lwc-benchmarking"
    inc = ["-I", str(d), "-I", str(fw / "include"), "-I", str(fw / "src")]
    flags = CPU_FLAGS[core] + (opt_flags(config) if published_toolchain else [CONFIGS[config]])
    objs = []
    odir = outdir / row.key.replace("/", "__")
    odir.mkdir(parents=True, exist_ok=True)
    asm_objs = []
    origin = Origin()
    direct = []  # the implementation's lwc_crypto_aead.c does not compile: call crypto_aead_encrypt
    _, _, _, harness, glue = PRIMITIVES[row.primitive]
    for s in srcs + [MCU / "nistlwc" / harness]:
        o = odir / (s.name + ".o")
        if s.suffix == ".cpp":
            cmd = ["arm-none-eabi-g++", *flags, *CXX_FLAGS, *inc, "-save-temps=obj", "-c", str(s), "-o", str(o)]
        elif s.suffix == ".c":  # the assembler output shows which asm statements were emitted
            cmd = ["arm-none-eabi-gcc", *flags, *COMMON_FLAGS, *direct, *inc, "-save-temps=obj", "-c", str(s),
                   "-o", str(o)]
        else:
            cmd = ["arm-none-eabi-gcc", *flags, *COMMON_FLAGS, *direct, *inc, "-c", str(s), "-o", str(o)]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode and s.stem == glue:
            direct = ["-DLWC_DIRECT"]
            continue
        if r.returncode:
            return None, f"{s.name}: {first_error(r.stderr)}", "?", Origin()
        objs.append(str(o))
        if s.suffix in (".S", ".s"):
            asm_objs.append(o)
            origin.asm |= defined_functions(o)
        elif (odir / (s.name + ".s")).is_file():
            for fn, n in inline_asm_functions((odir / (s.name + ".s")).read_text(errors="replace")).items():
                origin.inline[fn] = origin.inline.get(fn, 0) + n
    asm_bytes = sum(text_bytes(o) for o in asm_objs)
    kind = impl_kind(d, asm_bytes, sum(origin.inline.values()))
    elf = odir / "image.elf"
    link = ["arm-none-eabi-gcc", *flags, "-nostartfiles", "-T", str(MCU / "nistlwc" / "nistlwc.ld"),
            "-Wl,--gc-sections", "--specs=nosys.specs", *objs, "-lc", "-lgcc", "-o", str(elf)]
    if any(s.suffix == ".cpp" for s in srcs):
        link[0] = "arm-none-eabi-g++"
    r = subprocess.run(link, capture_output=True, text=True)
    if r.returncode:
        return None, f"link: {first_error(r.stderr)}", kind, origin
    return elf, "", kind, origin


# --- emulation ----------------------------------------------------------------------------

@dataclasses.dataclass
class Cell:
    ad: int
    msg: int
    cycles: int | None
    insns: int | None
    stall: int | None
    rc: int | None
    ct_digest: str
    error: str = ""
    # with trace=True: the executed blocks (emulate.Emulator.trace) of lwc_prepare then
    # lwc_encrypt, and where lwc_encrypt's start
    trace: object = None
    trace_split: int = 0
    flash_reads: int | None = None  # with trace=True: lwc_encrypt's data reads from flash


def emulate_cells(elf: pathlib.Path, board, cells, max_insns: int, profile_cell=None, trace=False):
    img = emulate.load_image(str(elf))
    emu = emulate.Emulator(img, board.triple, board=board, max_insns=max_insns)
    out, prof = [], None
    for ad, msg in cells:
        uc = emu.new_machine()
        emu.trace = array.array("Q") if trace else None
        try:
            emu.call(uc, "lwc_prepare", ad, msg)
            split = len(emu.trace) if trace else 0
            if (ad, msg) == profile_cell:
                emu.profile = {}
            before = emu.stall_cycles
            emu.flash_reads = 0 if trace else None
            ph = emu.call(uc, "lwc_encrypt", ad, msg)
            reads, emu.flash_reads = emu.flash_reads, None
            stall = emu.stall_cycles - before
            if emu.profile is not None:
                prof, emu.profile = emu.profile, None
            clen = int.from_bytes(bytes(uc.mem_read(img.symbols["lwc_clen"], 8)), "little")
            ct = bytes(uc.mem_read(img.symbols["lwc_ct"], min(clen, msg + 64)))
            out.append(Cell(ad, msg, ph.cycles, ph.insns, stall, emu._rc[-1], hashlib.sha256(ct).hexdigest()[:16],
                            trace=emu.trace, trace_split=split, flash_reads=reads))
        except emulate.InsnCapExceeded as e:
            out.append(Cell(ad, msg, None, None, None, None, "", f"cap: {e}"))
            break  # longer inputs only cost more
        except Exception as e:  # unicorn faults: the build runs on no board
            out.append(Cell(ad, msg, None, None, None, None, "", f"emulation: {e}"))
            emu.profile = None
    emu.trace = None
    return out, prof, emu


def emulate_row(row, kind, elf, why, board, cells, max_insns, hi_cell=SLOPE_HI, origin=None, trace=False) -> dict:
    res = {"row": row, "kind": kind, "error": why, "cells": {}, "hot": [], "asm_share": None}
    if elf:
        ours, prof, emu = emulate_cells(elf, board, cells, max_insns, profile_cell=hi_cell, trace=trace)
        res["cells"] = {(c.ad, c.msg): c for c in ours}
        res["hot"] = hot_blocks(prof, emu)
        res["kind"], res["asm_share"] = classify_by_cycles(origin or Origin(), prof, emu.img, kind)
    return res


def emulation_failure(cells: dict, reference: dict | None,
                      what: str = "the host-built reference implementation") -> str:
    """Why an image that built is no valid row ("" when it is one): it crashed (a fault, a jump to
    no code), returned non-zero, or produced a ciphertext other than the host-built reference's."""
    for (ad, msg), c in sorted(cells.items()):
        if c.error.startswith("emulation:"):
            return f"crashed in emulation at ad={ad} msg={msg}: {c.error[len('emulation:'):].strip()}"
    for (ad, msg), c in sorted(cells.items()):
        if c.rc not in (0, None):
            return f"crypto_aead_encrypt returned {c.rc} at ad={ad} msg={msg}"
    if reference:
        shared = [xy for xy, c in cells.items() if c.ct_digest and xy in reference]
        wrong = [xy for xy in shared if reference[xy] != cells[xy].ct_digest]
        if wrong:
            return (f"ciphertext differs from {what} at {len(wrong)} of "
                    f"{len(shared)} cells (first: ad={wrong[0][0]} msg={wrong[0][1]})")
    return ""


def parse_kat(text: str) -> list:
    """(ad bytes, msg bytes, ciphertext hex) of the entries of an LWC_AEAD_KAT file whose key, nonce,
    message and AD are the harness's inputs (byte i = i & 0xff); other entries are skipped."""
    out, cur = [], {}
    for ln in text.splitlines() + [""]:
        if "=" in ln:
            k, _, v = ln.partition("=")
            cur[k.strip()] = v.strip().lower()
        elif cur:
            pt, ad = cur.get("PT", ""), cur.get("AD", "")
            fields = [cur.get("Key", ""), cur.get("Nonce", ""), pt, ad]
            if "CT" in cur and all(f == bytes(i & 0xFF for i in range(len(f) // 2)).hex() for f in fields):
                out.append((len(ad) // 2, len(pt) // 2, cur["CT"]))
            cur = {}
    return out


_KAT_ENTRIES: dict = {}


def kat_entries(path: pathlib.Path) -> list:
    """parse_kat of one KAT file, read once per run: every implementation of a variant checks
    against the same file (the image's own entry and the host-built ref's)."""
    key = str(path)
    if key not in _KAT_ENTRIES:
        _KAT_ENTRIES[key] = parse_kat(path.read_text(errors="replace"))
    return list(_KAT_ENTRIES[key])


def kat_files(root: pathlib.Path, row: Row, ref: pathlib.Path) -> list:
    """The variant's LWC_AEAD_KAT file, else its combined AEAD+hash folder's (xoodyakround3,
    romulusm_romulush)."""
    combined = root / "implementations" / row.submission / "crypto_aead_hash"
    return (sorted(ref.parent.glob("LWC_AEAD_KAT_*.txt")) or sorted(combined.glob(f"{row.variant}/LWC_AEAD_KAT_*.txt"))
            or sorted(combined.glob(f"{row.variant}_*/LWC_AEAD_KAT_*.txt")))


def kat_reference(root: pathlib.Path, row: Row) -> tuple:
    """({cell: ciphertext digest}, file name) of the official KAT entry with the longest message and
    AD the harness's inputs give (32:32 in the NIST files), for the image itself to reproduce; ({}, "")
    without a KAT file."""
    ref = impl_dir(root, dataclasses.replace(row, implementation="ref"))
    kat = kat_files(root, row, ref)
    entries = kat_entries(kat[0]) if kat else []
    if not entries:
        return {}, ""
    ad, m, ct = max(entries, key=lambda e: (e[1], e[0]))
    return {(ad, m): hashlib.sha256(bytes.fromhex(ct)).hexdigest()[:16]}, kat[0].name


_HOST_REFS: dict = {}


def host_reference(root: pathlib.Path, row: Row, cells, outdir: pathlib.Path) -> tuple:
    """({cell: ciphertext digest}, what it is) from the variant's `ref` implementation built with the
    host's cc: code independent of the image under test, itself checked against the variant's
    LWC_AEAD_KAT file where the tree has one. ({}, reason) when there is no usable reference."""
    ref = impl_dir(root, dataclasses.replace(row, implementation="ref"))
    key = (str(ref), tuple(cells))
    if key in _HOST_REFS:
        return _HOST_REFS[key]
    srcs = sorted(str(p) for p in ref.glob("*.c") if p.name not in SKIP_SRC and p.name != "lwc_crypto_aead.c") \
        if ref.is_dir() else []
    if not srcs or shutil.which("cc") is None:
        got = ({}, "no reference implementation (ref) to compare with" if not srcs else "no host cc")
        _HOST_REFS[key] = got
        return got
    exe = outdir / f"host_ref__{row.submission}__{row.variant}"
    fw = root / "src" / "lwc-benchmarking"
    cmd = ["cc", "-O1", "-w", "-std=gnu11", "-I", str(ref), "-I", str(fw / "include"), *srcs,
           str(MCU / "nistlwc" / "host_ref.c"), "-o", str(exe)]
    r = subprocess.run(cmd, capture_output=True, text=True)
    kat = kat_files(root, row, ref)
    checked = kat_entries(kat[0])[:40] if kat else []
    want = list(cells) + [(ad, m) for ad, m, _ in checked]
    out = subprocess.run([str(exe)] + [f"{ad}:{m}" for ad, m in want], capture_output=True, text=True,
                         timeout=120) if not r.returncode else None
    if r.returncode or out.returncode:
        got = ({}, f"reference implementation does not build or run on the host ({first_error(r.stderr)})")
        _HOST_REFS[key] = got
        return got
    cts = {}
    for ln in out.stdout.splitlines():
        ad, m, rc, *hx = ln.split()
        cts[(int(ad), int(m))] = (int(rc), hx[0] if hx else "")
    bad = [(ad, m) for ad, m, ct in checked if cts.get((ad, m), (1, ""))[1] != ct]
    if bad:
        got = ({}, f"reference implementation fails {kat[0].name} at {len(bad)} entries: not used")
    else:
        digests = {xy: hashlib.sha256(bytes.fromhex(cts[xy][1])).hexdigest()[:16] for xy in cells
                   if xy in cts and cts[xy][0] == 0}
        got = (digests, f"host-built ref{f', which passes {kat[0].name} ({len(checked)} entries)' if kat else ''}")
    _HOST_REFS[key] = got
    return got


def save_traces(d: pathlib.Path, row: Row, cells: dict) -> None:
    """One file per implementation and cell: the executed blocks (zlib of the little-endian u64
    array), with a JSON index of the cells' cycles, instructions and trace split."""
    d.mkdir(parents=True, exist_ok=True)
    name = row.key.replace("/", "__")
    index = {}
    for (ad, msg), c in sorted(cells.items()):
        if c.trace is None or c.cycles is None:
            continue
        f = f"{name}__{ad}_{msg}.bin.z"
        t = c.trace if sys.byteorder == "little" else array.array("Q", c.trace)
        if sys.byteorder != "little":
            t.byteswap()
        tmp = d / f".{f}.tmp"
        tmp.write_bytes(zlib.compress(t.tobytes(), 6))
        os.replace(tmp, d / f)
        index[f"{ad}:{msg}"] = {"file": f, "cycles": c.cycles, "insns": c.insns, "rc": c.rc,
                                "split": c.trace_split, "blocks": len(c.trace), "flash_reads": c.flash_reads}
    write_atomic(d / f"{name}.json", json.dumps(index, indent=1) + "\n")


def hot_blocks(prof: dict, emu, n=2) -> list[str]:
    """Disassembly of the blocks that took the most cycles (evidence for a flagged slope)."""
    if not prof:
        return []
    total = sum(v[1] for v in prof.values()) or 1
    text = []
    for addr, (execs, cyc, size) in sorted(prof.items(), key=lambda kv: -kv[1][1])[:n]:
        code = None
        for vaddr, data in emu.img.segments:
            if vaddr <= addr < vaddr + len(data):
                code = data[addr - vaddr: addr - vaddr + size]
        ins = emu.costs.insns(code or b"", addr)
        name = _symbol_at(emu.img, addr)
        text.append(f"block {addr:#x} ({name}): {execs} executions, {cyc} cycles = {100 * cyc / total:.0f} % "
                    f"of the cell, {len(ins)} instructions, {emu.costs.block_cost(ins)} base cycles per pass")
        text += [f"    {i.address:#x}: {i.mnemonic} {i.op_str}" for i in ins[:40]]
        if len(ins) > 40:
            text.append(f"    ... {len(ins) - 40} more")
    return text


def _symbol_at(img, addr: int) -> str:
    best = ("?", -1)
    for name, a in img.symbols.items():
        a &= ~1
        if a <= addr and a > best[1] and not name.startswith(("$", "__")):
            best = (name, a)
    return f"{best[0]}+{addr - best[1]:#x}" if best[1] >= 0 else "?"


# --- output -------------------------------------------------------------------------------

def _f(v, fmt="{:.1f}"):
    return "" if v is None else fmt.format(v)


CELL_COLS = ["board", "board_profile", "config", "submission", "variant", "implementation", "cell", "ad_bytes",
             "msg_bytes", "published_cycles", "emulated_cycles", "error_pct", "instructions", "fetch_stall_cycles",
             "note"]
IMPL_COLS = ["board", "board_profile", "config", "submission", "variant", "implementation", "kind", "build",
             "build_error", "published_slope_cpb", "emulated_slope_cpb", "slope_error_pct", "slope_insns_per_byte",
             "total_cell", "published_total", "emulated_total", "total_error_pct", "cells_compared",
             "median_abs_cell_error_pct", "ct_check", "reference_check", "asm_cycle_share_pct"]


def median_abs(vals):
    v = [abs(x) for x in vals if x is not None]
    return statistics.median(v) if v else None


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--board", required=True, help="mkrzero | nano33ble | due | nodemcuv2 (ESP8266, QEMU)")
    ap.add_argument("--primitive", default="aead", help="aead (enc(x:y) cells, default) | hash (h(x) cells)")
    ap.add_argument("--config", default="o2", help="os | o1 | o2 | o3 (default o2)")
    ap.add_argument("--impl", default="*", help="glob over SUBMISSION/VARIANT/IMPLEMENTATION or IMPLEMENTATION")
    ap.add_argument("--cells", default="all",
                    help="all (every cell of the table) or slope (enc(0:128), enc(0:1024); hashes h(128), h(1024))")
    ap.add_argument("--max-insns", type=int, default=DEFAULT_MAX_INSNS, help="instruction cap per encryption call")
    ap.add_argument("--jobs", type=int, default=2, help="parallel builds (default 2)")
    ap.add_argument("--boards-file", default=str(emulate.BOARDS_FILE))
    ap.add_argument("--build-dir", help="where objects and images go (default: a temporary directory)")
    ap.add_argument("--out", required=True, type=pathlib.Path)
    a = ap.parse_args(argv)
    try:
        return run(a)
    except (Fail, emulate.BoardError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2


def run(a) -> int:
    t0 = time.time()
    if a.board not in BOARD_TABLE and a.board not in LX106_BOARDS:
        raise Fail(f"--board: {a.board!r} has no published NIST LWC table here "
                   f"(expected one of {', '.join([*BOARD_TABLE, *sorted(LX106_BOARDS)])})")
    if a.primitive not in PRIMITIVES:
        raise Fail(f"--primitive: {a.primitive!r} (expected aead or hash)")
    if a.config not in CONFIGS:
        raise Fail(f"--config: {a.config!r} (expected os, o1, o2 or o3)")
    if a.cells not in ("all", "slope"):
        raise Fail(f"--cells: {a.cells!r} (expected all or slope)")
    if not 1 <= a.jobs <= 64:
        raise Fail(f"--jobs: {a.jobs} out of range 1..64")
    if not 1_000 <= a.max_insns <= 2_000_000_000:
        raise Fail(f"--max-insns: {a.max_insns} out of range 1000..2000000000")
    if a.board in LX106_BOARDS:
        import lx106_nist
        return lx106_nist.run(a)
    boards = emulate.load_boards(a.boards_file)
    if a.board not in boards:
        raise Fail(f"{a.boards_file}: no profile for board {a.board}")
    # mcu/cortexm_fit.py records with a variant of the profile (no fetch stalls) and keeps the
    # block traces of every cell (trace_dir) to re-price them under other fetch parameters
    board = getattr(a, "profile", None) or boards[a.board]
    trace_dir = getattr(a, "trace_dir", None)
    root = shared_dir()
    table = root / "benchmarks" / f"{BOARD_TABLE[a.board]}-{PRIMITIVES[a.primitive][0]}.csv"
    try:
        rows = parse_table(table.read_text(), str(table), a.primitive)
    except OSError as e:
        raise Fail(f"{table}: {e}") from None
    rows = [r for r in rows if r.config == a.config and (fnmatch.fnmatchcase(r.key, a.impl)
                                                          or fnmatch.fnmatchcase(r.implementation, a.impl))]
    if not rows:
        raise Fail(f"--impl: {a.impl!r} matches no {a.config} row of {table.name}")
    a.out.mkdir(parents=True, exist_ok=True)
    cc_version = compiler_version("arm-none-eabi-gcc")
    unit = "us" if BOARD_TABLE[a.board] in MICROS_TABLES else "cycles"
    if unit == "us":  # compared in cycles at the board's clock
        for r in rows:
            r.cells = {xy: (None if v is None else round(v * board.mhz)) for xy, v in r.cells.items()}
    all_cells = sorted(rows[0].cells)
    hi = a.hi_cell = SLOPE_HI if SLOPE_HI in all_cells else SHORT_SLOPE_HI
    slope_cells = [SLOPE_LO, hi]
    cells = slope_cells if a.cells == "slope" else sorted(set(all_cells) | set(slope_cells),
                                                          key=lambda c: (c[0] + c[1], c))
    bdir_ctx = tempfile.TemporaryDirectory(prefix="nistlwc-build-") if not a.build_dir else None
    bdir = pathlib.Path(a.build_dir or bdir_ctx.name)
    cell_rows, impl_rows, results = [], [], []
    # builds in parallel (--jobs), emulation one at a time in table order
    with concurrent.futures.ThreadPoolExecutor(max_workers=a.jobs) as pool:
        builds = [pool.submit(build, root, row, board.core, a.config, bdir) for row in rows]
        for i, (row, fut) in enumerate(zip(rows, builds), 1):
            elf, why, kind, origin = fut.result()
            res = emulate_row(row, kind, elf, why, board, cells, a.max_insns, hi, origin, trace=trace_dir is not None)
            if elf and a.primitive == "aead":
                # a crash or non-zero return first, then the image against the official vector,
                # then every cell against the host-built reference
                ref, res["ref_check"] = host_reference(root, row, cells, bdir)
                res["error"] = emulation_failure(res["cells"], None)
                kat_ref, kat_name = kat_reference(root, row)
                if kat_ref and not res["error"]:
                    extra, _, _ = emulate_cells(elf, board, list(kat_ref), a.max_insns)
                    res["error"] = emulation_failure({(c.ad, c.msg): c for c in extra}, kat_ref,
                                                     f"the official {kat_name} entry")
                    res["ref_check"] += "" if res["error"] else f"; the image reproduces {kat_name} at ad=msg=32"
                res["error"] = res["error"] or emulation_failure(res["cells"], ref)
            print(f"[{i}/{len(rows)}] {row.key} ({res['kind']}){' FAILED: ' + res['error'] if res['error'] else ''}",
                  file=sys.stderr, flush=True)
            if trace_dir is not None:
                save_traces(trace_dir, row, res["cells"])
                for c in res["cells"].values():
                    c.trace = None  # on disk now: a long table's traces do not stay in memory
            results.append(res)
    # ciphertext cross-check: every implementation of a variant must agree with the majority
    by_var: dict = {}
    for res in results:
        for xy, c in res["cells"].items():
            if c.ct_digest and c.rc == 0:
                by_var.setdefault((res["row"].variant, xy), []).append(c.ct_digest)
    for res in results:
        row, cs = res["row"], res["cells"]
        bad = [xy for xy, c in cs.items() if c.ct_digest and c.rc == 0 and
               (lambda ds: ds.count(c.ct_digest) * 2 <= len(ds) and len(ds) > 1)(by_var[(row.variant, xy)])]
        nonzero = [xy for xy, c in cs.items() if c.rc not in (0, None)]
        others = any(len(by_var.get((row.variant, xy), [])) > 1 for xy in cs)
        res["ct_check"] = ("" if not cs else f"rc!=0 at {len(nonzero)} cells" if nonzero else
                           f"differs from the other implementations at {len(bad)} cells" if bad else
                           "agrees" if others else "no other implementation to compare")
        for xy in (cells if cs else []):
            c = cs.get(xy)
            pub = row.cells.get(xy)
            e = err_pct(c.cycles if c else None, pub)
            cell_rows.append([a.board, board.id, a.config, row.submission, row.variant, row.implementation,
                              cell_label(a.primitive, xy), xy[0], xy[1], "" if pub is None else pub,
                              "" if not c or c.cycles is None else c.cycles, _f(e), "" if not c or c.insns is None else c.insns,
                              "" if not c or c.stall is None else c.stall, c.error if c else "not run (cap)"])
        oc = {xy: (c.cycles if c.rc == 0 else None) for xy, c in cs.items()}
        oi = {xy: (c.insns if c.rc == 0 else None) for xy, c in cs.items()}
        ps, es, ins = slope(row.cells, hi), slope(oc, hi), slope(oi, hi)
        errs = [err_pct(oc.get(xy), row.cells.get(xy)) for xy in cells]
        res.update(pub_slope=ps, our_slope=es, slope_err=err_pct(es, ps), ins_slope=ins,
                   total_err=err_pct(oc.get(hi), row.cells.get(hi)))
        impl_rows.append([a.board, board.id, a.config, row.submission, row.variant, row.implementation, res["kind"],
                          "failed" if res["error"] else "ok", res["error"], _f(ps, "{:.2f}"), _f(es, "{:.2f}"),
                          _f(res["slope_err"]), _f(ins, "{:.2f}"), cell_label(a.primitive, hi),
                          "" if row.cells.get(hi) is None else row.cells[hi],
                          "" if oc.get(hi) is None else oc[hi], _f(res["total_err"]),
                          sum(e is not None for e in errs), _f(median_abs(errs)), res["ct_check"],
                          res.get("ref_check", ""), _f(None if res["asm_share"] is None else 100 * res["asm_share"])])
    duration = time.time() - t0
    md = markdown(a, board, results, cc_version, duration)
    write_atomic(a.out / "nist_lwc_cells.csv", _csv(CELL_COLS, cell_rows))
    write_atomic(a.out / "nist_lwc_impls.csv", _csv(IMPL_COLS, impl_rows))
    write_atomic(a.out / "nist_lwc.md", md)
    prov = (root / "PROVENANCE.md").read_text(errors="replace") if (root / "PROVENANCE.md").exists() else ""
    commit = m.group(0) if (m := re.search(r"\b[0-9a-f]{40}\b", prov)) else None
    record = {
        "kind": "mcu-nist-lwc",
        "board": a.board,
        "primitive": a.primitive,
        "board_profile": dataclasses.asdict(board),
        "boards_file": str(a.boards_file),
        "config": a.config,
        "impl_filter": a.impl,
        "cells": a.cells,
        "max_insns_per_call": a.max_insns,
        "compiler": cc_version,
        "cflags": CPU_FLAGS[board.core] + opt_flags(a.config) + COMMON_FLAGS,
        "cxxflags": CPU_FLAGS[board.core] + opt_flags(a.config) + CXX_FLAGS,
        "ldflags": ["-nostartfiles", "-T", "mcu/nistlwc/nistlwc.ld", "-Wl,--gc-sections", "--specs=nosys.specs",
                    "-lc", "-lgcc"],
        "nist_lwc_tree": str(root),
        "nist_lwc_commit": commit,
        "published_table": table.name,
        "published_unit": unit if unit == "cycles" else f"us, compared as us x {board.mhz:g} cycles",
        "slope_cells": [cell_label(a.primitive, SLOPE_LO), cell_label(a.primitive, hi)],
        "implementations": len(results),
        "built": sum(1 for r in results if not r["error"]),
        "duration_s": round(duration, 1),
        "files": ["nist_lwc_cells.csv", "nist_lwc_impls.csv", "nist_lwc.md"],
        "method": "mcu/README.md (NIST LWC tables)",
    }
    write_atomic(a.out / "run.json", json.dumps(record, indent=1) + "\n")
    print(f"wrote {a.out} (nist_lwc_cells.csv, nist_lwc_impls.csv, nist_lwc.md, run.json) in {duration:.0f} s",
          file=sys.stderr)
    return 0


def summary(results) -> dict:
    ok = [r for r in results if not r["error"] and r.get("slope_err") is not None]
    asm = [r for r in ok if r["kind"] in ("asm", "inline-asm")]
    return {"asm_median": median_abs([r["slope_err"] for r in asm]), "asm_n": len(asm),
            "all_median": median_abs([r["slope_err"] for r in ok]), "all_n": len(ok)}


def markdown(a, board, results, cc_version, duration) -> str:
    s = summary(results)
    hic = a.hi_cell
    hi, lo = cell_label(a.primitive, hic), cell_label(a.primitive, SLOPE_LO)
    span = hic[1] - SLOPE_LO[1]
    call = "crypto_hash" if a.primitive == "hash" else "crypto_aead_encrypt"
    L = [f"# NIST LWC {a.primitive.upper() if a.primitive == 'aead' else 'hash'} table, {a.board} ({a.config}): "
         "published vs emulated", "",
         f"Board profile **{board.describe()}** (data/boards.toml). Compiler {cc_version}, "
         f"{' '.join(CPU_FLAGS[board.core] + opt_flags(a.config))}. Published: the NIST LWC benchmarks "
         f"(real board, median of trials, cycles); ours: emulated cycles of the one {call} call "
         f"(mcu/emulate.py, {board.core} model + the board profile). Error = (ours - published) / published."
         + (f" This board's table is in microseconds (micros(), 1 us resolution, interrupts on): compared "
            f"here as us x {board.mhz:g} cycles." if BOARD_TABLE[a.board] in MICROS_TABLES else ""), "",
         f"Median |slope error|: **{_f(s['asm_median']) or 'n/a'} %** over {s['asm_n']} asm/inline-asm "
         f"implementations, **{_f(s['all_median']) or 'n/a'} %** over all {s['all_n']} that build and run. "
         f"Run time {duration:.0f} s.", "",
         f"Slope = ({hi} - {lo}) / {span}, cycles per message byte; ins/B = instructions per byte "
         "(ours); pub. c/ins = the published slope over our instruction slope (what the board's CPI would be "
         "if its compiler had emitted our instructions).", "",
         "| implementation | kind | pub. c/B | ours c/B | slope err % | ins/B | ours c/ins | pub. c/ins | "
         f"{hi} pub. | ours | err % | median cell err % | output check |",
         "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    for r in results:
        if r["error"]:
            continue
        row = r["row"]
        ins = r.get("ins_slope")
        cpi = r["our_slope"] / ins if r.get("our_slope") and ins else None
        pcpi = r["pub_slope"] / ins if r.get("pub_slope") and ins else None
        oc = r["cells"].get(hic)
        errs = [err_pct(c.cycles, row.cells.get(xy)) for xy, c in r["cells"].items()]
        L.append(f"| {row.key} | {r['kind']} | {_f(r.get('pub_slope'))} | {_f(r.get('our_slope'))} | "
                 f"{_f(r.get('slope_err'))} | {_f(ins)} | {_f(cpi, '{:.2f}')} | {_f(pcpi, '{:.2f}')} | "
                 f"{'' if row.cells.get(hic) is None else f'{row.cells[hic]:,}'} | "
                 f"{'' if not oc or oc.cycles is None else f'{oc.cycles:,}'} | {_f(r.get('total_err'))} | "
                 f"{_f(median_abs(errs))} | {r.get('ct_check', '')} |")
    fails = [r for r in results if r["error"]]
    L += ["", f"## Failures: build, crash, wrong output ({len(fails)})", "",
          "Excluded from the medians. An image fails when it does not build, crashes in emulation, returns "
          "non-zero, or its ciphertext differs from the variant's reference implementation built for the host "
          "(itself checked against the variant's LWC_AEAD_KAT file where the tree has one).", ""]
    L += [f"* {r['row'].key}: {r['error']}" for r in fails] or ["none"]
    flagged = [r for r in results if r.get("slope_err") is not None and abs(r["slope_err"]) > FLAG_PCT]
    L += ["", f"## Beyond ±{FLAG_PCT:.0f} % (slope): evidence ({len(flagged)})", "",
          "Generated: the instruction slope and CPI beside the published figure, and the blocks that "
          f"took the most cycles in {hi}. A published c/ins far from any plausible CPI for the core "
          "(M0+: ~1.1-2, M4: ~1-1.6 for this code) means the board ran different instructions (another "
          "compiler/flags), not that the timing model is off; a plausible one with a large error points at "
          "the model (memory wait states, pipelining).", ""]
    for r in flagged:
        ins = r.get("ins_slope")
        L += [f"### {r['row'].key} ({r['kind']}): slope error {r['slope_err']:+.1f} %", "",
              f"published {r['pub_slope']:.1f} c/B, ours {r['our_slope']:.1f} c/B over {_f(ins, '{:.1f}')} ins/B "
              f"(our CPI {r['our_slope'] / ins:.2f}, published would need CPI {r['pub_slope'] / ins:.2f})"
              if ins else "", "", "```"] + r["hot"] + ["```", ""]
    return "\n".join(L) + "\n"


if __name__ == "__main__":
    sys.exit(main())
