#!/usr/bin/env python3
"""Xtensa LX106 (ESP8266) in emulation: build with xtensa-lx106-elf-gcc, run in QEMU's lx106 CPU,
count cycles with an LX106 pipeline model over the execution trace.

Route: an image linked by mcu/lx106/lx106.ld (code at the flash-cache window 0x40200000, data
from 0x3ffe8000) runs in `qemu-system-xtensa -M sim -cpu lx106 -semihosting`, started at its
entry by `-device loader,addr=ENTRY,cpu-num=0` (`-kernel` alone starts at 0x50000000). With
`-d in_asm,exec,nochain` QEMU logs every translation block (TB) once with its instructions and
every execution of a TB, in order; a TB ends at every branch, jump, call and return, so the
sequence of TB starts is the program's control flow and each TB's instructions ran in order.
(`-singlestep` gives one TB per instruction and the same counts; a test checks it.)

The cycle model (`Timing`, parameters in the board's [board.ID.lx106] of data/boards.toml,
their sources in its [board.ID.sources]) charges,
per executed instruction, `base`; plus `load_use` / `mul_use` / `rsr_use` when the next
executed instruction reads the result of a load / multiply / RSR; `taken_branch` when a
conditional branch goes to its target; `jump` for J, CALL0, CALLX0, JX, RET; `l32r_flash` for
an L32R whose literal is in flash; `flash_fetch_hit` per instruction fetched from flash.
`events()` gives the counts, `Timing.cycles()` the weighted sum, so a fit over the parameters
needs one emulation per cell.
"""
from __future__ import annotations

import dataclasses
import hashlib
import os
import pathlib
import re
import subprocess
import tempfile
import threading
from collections import Counter

MCU = pathlib.Path(__file__).resolve().parent
LX = MCU / "lx106"
CC, CXX = "xtensa-lx106-elf-gcc", "xtensa-lx106-elf-g++"
QEMU = "qemu-system-xtensa"
FLASH = (0x4020_0000, 0x4030_0000)  # the flash-cache window (QEMU: xtensa.instrom0)
IRAM = (0x4010_0000, 0x4020_0000)
CELLS_AT = 0x3FFC_0000  # lwc_cells in lx106.ld
MAX_CELLS = 128
EVENTS = ("insns", "load_use", "mul_use", "rsr_use", "taken_branch", "jump", "l32r_flash", "flash_fetch")


class Lx106Error(Exception):
    """Bad input or environment: one `error:` line."""


# --- timing parameters ----------------------------------------------------------------------

TIMING_KEYS = ("base", "load_use", "mul_use", "rsr_use", "taken_branch", "jump", "l32r_flash", "flash_fetch_hit")


@dataclasses.dataclass
class Timing:
    base: int = 1
    load_use: int = 1
    mul_use: int = 1
    rsr_use: int = 1
    taken_branch: int = 2
    jump: int = 2
    l32r_flash: int = 0
    flash_fetch_hit: int = 0

    def cycles(self, ev: dict) -> int:
        return (ev["insns"] * self.base + ev["load_use"] * self.load_use + ev["mul_use"] * self.mul_use
                + ev["rsr_use"] * self.rsr_use + ev["taken_branch"] * self.taken_branch + ev["jump"] * self.jump
                + ev["l32r_flash"] * self.l32r_flash + ev["flash_fetch"] * self.flash_fetch_hit)


@dataclasses.dataclass
class BoardModel:
    id: str
    name: str
    table: str
    mhz: float
    cflags: list
    timing: Timing
    sources: dict
    fit: dict
    path: str


def load_board(name: str = "esp8266", path: pathlib.Path | str | None = None) -> BoardModel:
    """The LX106 board `name` (its id, esp8266, or the NIST LWC table it reproduces, nodemcuv2)
    from data/boards.toml (or `path`): its [board.ID.lx106] table, every timing parameter with
    its source in [board.ID.sources] (mcu/boardfile.py checks both)."""
    import boardfile
    try:
        b = boardfile.lx106_board(name, path)
    except boardfile.BoardError as e:
        raise Lx106Error(str(e)) from None
    lx = b.lx106
    return BoardModel(b.id, b.name, lx.table, b.mhz, list(lx.cflags), Timing(**lx.timing), dict(lx.sources),
                      dict(lx.fit), str(path or boardfile.BOARDS_FILE))


# --- instructions ---------------------------------------------------------------------------

_REG = re.compile(r"^a(\d{1,2})$")
LOADS = {"l8ui", "l16ui", "l16si", "l32i", "l32i.n", "l32r", "l32ai"}
STORES = {"s8i", "s16i", "s32i", "s32i.n", "s32ri"}
MULS = {"mull", "mul16u", "mul16s", "muluh", "mulsh"}
JUMPS = {"j", "call0", "callx0", "jx", "ret", "ret.n"}
NO_DEST = STORES | {"jx", "j", "ret", "ret.n", "wsr", "wur", "ssl", "ssr", "ssa8l", "ssa8b", "ssai", "nop", "nop.n",
                    "memw", "isync", "rsync", "esync", "dsync", "extw", "simcall", "break", "break.n", "ill",
                    "s32e", "waiti", "rfe", "rfi", "wdtlb", "witlb"}


@dataclasses.dataclass(frozen=True)
class Insn:
    addr: int
    size: int
    mnemonic: str
    dst: frozenset
    src: frozenset
    kind: str  # "load" | "mul" | "rsr" | "cond" | "jump" | "other"
    literal: int | None = None  # L32R's literal address

    @property
    def end(self) -> int:
        return self.addr + self.size


def decode(addr: int, text: str, size: int) -> Insn:
    """One instruction as QEMU's xtensa disassembler prints it ("l32i.n a3, a1, 12")."""
    parts = text.strip().split(None, 1)
    mn = parts[0].lower() if parts else "?"
    ops = [o.strip() for o in parts[1].split(",")] if len(parts) > 1 else []
    regs = [int(m.group(1)) for o in ops if (m := _REG.match(o))]
    first = int(m.group(1)) if ops and (m := _REG.match(ops[0])) else None
    lit = None
    if mn in LOADS:
        kind, dst, src = "load", {first}, set(regs[1:])
        if mn == "l32r" and len(ops) > 1:
            try:
                lit = int(ops[1], 16)
            except ValueError:
                lit = None
    elif mn in MULS:
        kind, dst, src = "mul", {first}, set(regs[1:])
    elif mn == "rsr" or mn.startswith("rsr."):
        kind, dst, src = "rsr", {first}, set()
    elif mn in JUMPS:
        kind = "jump"
        src = {0} if mn.startswith("ret") else set(regs)
        dst = {0} if mn.startswith("call") else set()
    elif mn.startswith("b") and mn not in ("break", "break.n"):
        kind, dst, src = "cond", set(), set(regs)
    elif mn in NO_DEST or mn.startswith(("wsr", "wur")):
        kind, dst, src = "other", set(), set(regs)
    elif mn.startswith(("movi", "const16")):
        kind, dst, src = "other", {first}, set()
    else:  # ALU: the first register operand is written, the rest read (MOVEQZ & co also read it)
        kind, dst = "other", {first}
        src = set(regs[1:]) | ({first} if mn.startswith(("moveqz", "movnez", "movltz", "movgez")) else set())
    dst.discard(None)
    return Insn(addr, size, mn, frozenset(dst), frozenset(src), kind, lit)


_USE_EVENT = {"load": "load_use", "mul": "mul_use", "rsr": "rsr_use"}


@dataclasses.dataclass
class Block:
    """A translation block: its instructions and its own (start-independent) event counts."""
    pc: int
    insns: list
    static: dict  # events inside the block per execution

    @property
    def fallthrough(self) -> int:
        return self.insns[-1].end

    @property
    def last(self) -> Insn:
        return self.insns[-1]


def make_block(pc: int, insns: list) -> Block:
    ev = dict.fromkeys(EVENTS, 0)
    ev["insns"] = len(insns)
    for i, ins in enumerate(insns):
        if FLASH[0] <= ins.addr < FLASH[1]:
            ev["flash_fetch"] += 1
        if ins.mnemonic == "l32r" and ins.literal is not None and FLASH[0] <= ins.literal < FLASH[1]:
            ev["l32r_flash"] += 1
        if ins.kind == "jump":
            ev["jump"] += 1
        if i and insns[i - 1].kind in _USE_EVENT and insns[i - 1].dst & ins.src:
            ev[_USE_EVENT[insns[i - 1].kind]] += 1
    return Block(pc, insns, ev)


def transition(prev: Block, cur: Block) -> dict:
    """Events between two consecutive blocks: a taken conditional branch ending prev, or the
    result of prev's last instruction read by cur's first."""
    ev = {}
    last = prev.last
    if last.kind == "cond" and cur.pc != prev.fallthrough:
        ev["taken_branch"] = 1
    elif last.kind in _USE_EVENT and cur.pc == prev.fallthrough and last.dst & cur.insns[0].src:
        ev[_USE_EVENT[last.kind]] = 1
    return ev


def events(blocks: dict, path: list) -> dict:
    """Event counts of an execution given as the list of block start addresses, in order."""
    ev = dict.fromkeys(EVENTS, 0)
    execs = Counter(path)
    pairs = Counter(zip(path, path[1:]))
    return _sum_events(blocks, execs, pairs, ev)


def _sum_events(blocks, execs, pairs, ev):
    for pc, n in execs.items():
        for k, v in blocks[pc].static.items():
            ev[k] += v * n
    for (a, b), n in pairs.items():
        for k, v in transition(blocks[a], blocks[b]).items():
            ev[k] += v * n
    return ev


# --- building -------------------------------------------------------------------------------

COMMON = ["-ffunction-sections", "-fdata-sections", "-w"]
C_STD, CXX_STD = ["-std=gnu11"], ["-std=gnu++17", "-fno-exceptions", "-fno-rtti"]


def toolchain_version() -> str:
    try:
        cc = subprocess.run([CC, "--version"], capture_output=True, text=True, check=True).stdout.splitlines()[0]
        qv = subprocess.run([QEMU, "--version"], capture_output=True, text=True, check=True).stdout.splitlines()[0]
    except (OSError, subprocess.CalledProcessError, IndexError) as e:
        raise Lx106Error(f"{CC} / {QEMU} not usable ({e}); install them with mcu/setup.sh") from None
    return f"{cc}; {qv}"


def compile_one(src: pathlib.Path, obj: pathlib.Path, flags: list, inc: list) -> subprocess.CompletedProcess:
    if src.suffix == ".cpp":
        cmd = [CXX, *flags, *CXX_STD, *COMMON, *inc, "-c", str(src), "-o", str(obj)]
    else:
        cmd = [CC, *flags, *C_STD, *COMMON, *inc, "-c", str(src), "-o", str(obj)]
    return subprocess.run(cmd, capture_output=True, text=True)


def link(objs: list, elf: pathlib.Path, cxx: bool = False) -> subprocess.CompletedProcess:
    cmd = [CXX if cxx else CC, "-nostdlib", "-T", str(LX / "lx106.ld"), "-Wl,--gc-sections", *map(str, objs),
           "-lgcc", "-o", str(elf)]
    return subprocess.run(cmd, capture_output=True, text=True)


_RT_LOCK = threading.Lock()


def runtime_objs(flags: list, outdir: pathlib.Path, cxx: bool = False) -> list:
    """start.S and the minimal C library (C++ images: and its runtime), built once per flag set
    into outdir."""
    objs = []
    tag = hashlib.sha256(" ".join(flags).encode()).hexdigest()[:8]
    srcs = [LX / "start.S", LX / "libc" / "libc.c", LX / "libc" / "libgcc.c"] + ([LX / "libc" / "cxxrt.cpp"] if cxx else [])
    with _RT_LOCK:
        for src in srcs:
            o = outdir / f"rt_{src.stem}_{tag}.o"
            if not o.exists():
                # the copy loops must stay loops, not calls to memcpy/memset themselves
                r = compile_one(src, o, flags + ["-fno-tree-loop-distribute-patterns"],
                                ["-isystem", str(LX / "libc" / "include")])
                if r.returncode:
                    raise Lx106Error(f"{src}: {r.stderr.strip()[-300:] or 'failed'}")
            objs.append(o)
    return objs


# --- running --------------------------------------------------------------------------------

@dataclasses.dataclass
class CellRun:
    ad: int
    msg: int
    events: dict | None
    rc: int | None
    clen: int | None
    ct: bytes
    error: str = ""


@dataclasses.dataclass
class Trace:
    blocks: dict
    regions: list  # per timed region: (execs Counter, pairs Counter, first pc, insns)
    output: str
    status: int | None
    error: str = ""
    raw: bytes = b""  # what the program wrote to fd 1


def elf_symbols(elf: pathlib.Path) -> dict:
    from elftools.elf.elffile import ELFFile
    from elftools.elf.sections import SymbolTableSection
    with open(elf, "rb") as f:
        e = ELFFile(f)
        syms = {}
        for sec in e.iter_sections():
            if isinstance(sec, SymbolTableSection):
                for s in sec.iter_symbols():
                    if s.name:
                        syms[s.name] = s["st_value"]
        return {"entry": e.header["e_entry"], **syms}


def qemu_cmd(elf: pathlib.Path, entry: int, cells_file: pathlib.Path | None, singlestep: bool = False) -> list:
    cmd = [QEMU, "-M", "sim", "-cpu", "lx106", "-nographic", "-monitor", "none", "-semihosting",
           "-kernel", str(elf), "-device", f"loader,addr={entry:#x},cpu-num=0"]
    if cells_file:
        cmd += ["-device", f"loader,file={cells_file},addr={CELLS_AT:#x},force-raw=on"]
    if singlestep:
        cmd.append("-singlestep")
    return cmd + ["-d", "in_asm,exec,nochain,int"]


_IN = re.compile(r"^0x([0-9a-f]+):\s+(.*)$")


def trace(elf: pathlib.Path, cells: list | None = None, max_insns: int = 300_000_000, timeout: float = 600.0,
          singlestep: bool = False, whole: bool = False) -> Trace:
    """Run elf in QEMU and collect its blocks and the executions between each lwc_mark_begin and
    the next lwc_mark_end (whole=True: everything from the entry on, as one region). An image
    that runs past max_insns in one region or past timeout is stopped and reported."""
    syms = elf_symbols(elf)
    entry = syms["entry"]
    begin, end = syms.get("lwc_mark_begin"), syms.get("lwc_mark_end")
    with tempfile.TemporaryDirectory(prefix="lx106-") as td:
        cf = None
        if cells is not None:
            if len(cells) > MAX_CELLS:
                raise Lx106Error(f"{len(cells)} cells; at most {MAX_CELLS} per run")
            cf = pathlib.Path(td) / "cells.bin"
            words = [len(cells)] + [v for c in cells for v in c]
            cf.write_bytes(b"".join(int(w).to_bytes(4, "little") for w in words))
        out = pathlib.Path(td) / "stdout"
        with open(out, "wb") as fo:
            p = subprocess.Popen(qemu_cmd(elf, entry, cf, singlestep), stdout=fo, stderr=subprocess.PIPE,
                                 stdin=subprocess.DEVNULL, text=True, bufsize=1 << 20)
            # a program that stops producing log lines (WAITI with no interrupt to come) must
            # not hang the reader: the watchdog kills QEMU, which ends the log
            fired = threading.Event()

            def watchdog():
                fired.set()
                p.kill()
            timer = threading.Timer(timeout, watchdog)
            timer.start()
            try:
                blocks, regions, err = _read_log(p, begin, end, max_insns, whole, timeout)
            finally:
                timer.cancel()
                if p.poll() is None:
                    p.kill()
                p.wait()
                p.stderr.close()
            if fired.is_set() and not err:
                err = f"timeout: {timeout:.0f} s"
        raw = out.read_bytes()
    return Trace(blocks, regions, raw.decode(errors="replace"), p.returncode if not err else None, err, raw)


def _read_log(p, begin, end, max_insns, whole, timeout):
    import time
    t0 = time.monotonic()
    blocks: dict = {}
    regions = []
    pending: list = []  # (addr, text) of the block being disassembled
    in_block = False
    active = whole
    execs: Counter = Counter()
    pairs: Counter = Counter()
    prev = None
    first = None
    n = 0
    lines = 0
    for line in p.stderr:
        lines += 1
        if line.startswith("Trace"):
            # "Trace 0: 0xHOST [CS_BASE/PC/FLAGS/CFLAGS] sym": fields by position (the hot loop)
            i = line.find("[")
            j = line.find("/", i)
            k = line.find("/", j + 1)
            if i < 0 or j < 0 or k < 0:
                continue
            pc = int(line[j + 1:k], 16)
            if pc == begin and not whole:
                active, execs, pairs, prev, first, n = True, Counter(), Counter(), None, None, 0
                continue
            if pc == end and active and not whole:
                regions.append((execs, pairs, first, n))
                active = False
                continue
            if active:
                b = blocks.get(pc)
                if b is None:
                    return blocks, regions, f"block {pc:#x} executed without its disassembly in the log"
                execs[pc] += 1
                if prev is not None:
                    pairs[(prev, pc)] += 1
                else:
                    first = pc
                prev = pc
                n += len(b.insns)
                if n > max_insns:
                    return blocks, regions, f"cap: more than {max_insns} instructions in one call"
            if lines & 0xFFFF == 0 and time.monotonic() - t0 > timeout:
                return blocks, regions, f"timeout: {timeout:.0f} s"
        elif line.startswith("xtensa_cpu_do_interrupt"):
            # bare metal has no handler: any exception (bad address, illegal instruction,
            # stack overflow) ends the run as a crash
            m = re.search(r"\((\d+)\) pc = ([0-9a-f]+)", line)
            what = f"exception cause {m.group(1)} at pc {int(m.group(2), 16):#x}" if m else line.strip()[:120]
            return blocks, regions, f"crash: {what}"
        elif line.startswith("IN:"):
            in_block, pending = True, []
        elif in_block:
            m = _IN.match(line)
            if m:
                pending.append((int(m.group(1), 16), m.group(2)))
            elif not line.strip():
                in_block = False
                if pending:
                    insns = []
                    for i, (a, t) in enumerate(pending):
                        size = pending[i + 1][0] - a if i + 1 < len(pending) else (2 if ".n" in t.split()[0] else 3)
                        insns.append(decode(a, t, size))
                    blocks[pending[0][0]] = make_block(pending[0][0], insns)
    if whole:
        regions.append((execs, pairs, first, n))
    return blocks, regions, ""


def region_events(tr: Trace, region) -> dict:
    execs, pairs, _, _ = region
    return _sum_events(tr.blocks, execs, pairs, dict.fromkeys(EVENTS, 0))


def run_cells(elf: pathlib.Path, cells: list, max_insns: int, timeout: float | None = None) -> list:
    """Every (ad, msg) cell of cells in one QEMU run: event counts, return code and ciphertext.
    A run that stops early (crash, cap, timeout) reports the cells it did not finish as failed.
    The default wall-clock limit allows every cell its instruction cap at 0.2 M instructions
    per second (QEMU and the reader on a loaded machine) plus ten minutes."""
    if timeout is None:
        timeout = 600.0 + (len(cells) + 1) * max_insns / 200_000
    tr = trace(elf, cells, max_insns=max_insns, timeout=timeout)
    outs = {}
    for line in tr.output.splitlines():
        f = line.split()
        if len(f) >= 6 and f[0] == "cell" and all(x.isdigit() for x in f[1:6]):
            i, ad, msg, rc, clen = map(int, f[1:6])
            rc = rc - (1 << 32) if rc >= 1 << 31 else rc
            try:
                ct = bytes.fromhex(f[6]) if len(f) > 6 else b""
            except ValueError:
                ct = b""
            outs[i] = (rc, clen, ct)
    res = []
    for i, (ad, msg) in enumerate(cells):
        if i < len(tr.regions) and i in outs:
            rc, clen, ct = outs[i]
            res.append(CellRun(ad, msg, region_events(tr, tr.regions[i]), rc, clen, ct))
        else:
            why = tr.error or (f"crashed or exited early (QEMU exit status {tr.status})" if tr.status != 0
                               else "no result")
            res.append(CellRun(ad, msg, None, None, None, b"", why))
    return res


def check_tools() -> None:
    for tool in (CC, QEMU):
        if not any(os.access(os.path.join(d, tool), os.X_OK) for d in os.environ.get("PATH", "").split(os.pathsep)):
            raise Lx106Error(f"{tool} not found; install it with mcu/setup.sh (gcc-xtensa-lx106, qemu-system-misc)")
