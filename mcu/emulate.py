#!/usr/bin/env python3
"""Run an MCU image's `lwc_init` / `lwc_keystream` under Unicorn and count what executes.

For one image (ELF built by mcu/build.py) and one keystream length this

* maps the image's flash (0x10000000) and RAM (0x20000000) regions (mcu/images/lwc.ld) and
  loads every PT_LOAD segment at its virtual address (so `.data` is initialized and `.bss`
  is zero, as after a board's start-up code);
* paints the stack area (from the end of `.bss` to `__stack_top`) with a 32-bit pattern;
* calls `lwc_init(key, iv)`, then `lwc_keystream(out, nbits)`, each returning to a sentinel
  address outside flash/RAM (LR on Arm, ra on RISC-V), with key/IV/output in a separate
  "host" region so the cipher's RAM is untouched;
* counts executed instructions exactly and estimates cycles with the timing model of the
  target (MODELS below), per phase;
* reads the stack area back: the deepest word that no longer holds the pattern gives the
  worst-case stack depth of init + keystream;
* with `warm`, calls the same pair again on the same board, RAM and buffers reset but the
  instruction cache kept: the steady-state cost of a message in a loop beside the first
  call's cold cost (equal on a board without a cache);
* for an AEAD image built with the `ad-entry` feature (mcu/build.py `build_rust_ad_entry`),
  `Emulator.encrypt_ad` writes key, nonce, associated data and message into the host buffers
  and calls `lwc_init` then `lwc_encrypt_ad(out, nbits, ad, adlen)`: the official vectors with
  associated data (the counts use `lwc_keystream`, empty associated data).

Counting: the default ("block") mode hooks Unicorn translation blocks and adds a cached
per-block instruction count and cycle cost (capstone disassembly, cached per block address);
the cost of a conditional branch ending a block is resolved by where the next block starts.
The "insn" mode hooks every instruction (slower); tests check that both agree. Everything is
deterministic: no time, no randomness, same inputs -> same counts.

Board profiles (data/boards.toml, `Board`): with a board, instruction fetches from flash/XIP
add stall cycles per fetch line that misses (wait states, cache), with `flash_data_stall` each
data read from flash adds the same stall, and the M4 model pipelines neighbouring
loads/stores; without one, the core model alone.

CLI:  emulate.py ELF TARGET NBITS [--key HEX --iv HEX] [--mode insn|block] [--board ID] [--warm]
"""
from __future__ import annotations

import argparse
import dataclasses
import pathlib
import struct
import sys

import capstone
from capstone import arm_const as csarm
from elftools.elf.elffile import ELFFile
from elftools.elf.sections import SymbolTableSection
import unicorn
from unicorn import arm_const as ua
from unicorn import riscv_const as ur

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import boardfile  # noqa: E402

FLASH = (0x1000_0000, 2048 * 1024)
RAM = (0x2000_0000, 264 * 1024)
HOST = (0x3000_0000, 64 * 1024)  # key, IV, associated data, output buffer (not the cipher's memory)
KEY_AT, IV_AT, AD_AT, OUT_AT = HOST[0], HOST[0] + 0x100, HOST[0] + 0x200, HOST[0] + 0x1000
AD_MAX = OUT_AT - AD_AT  # associated data `encrypt_ad` can place
SENTINEL = 0x0F00_0000  # return address; mapped, never executed
PAINT = 0xC0FFEE5A  # stack paint word

# Timing models --------------------------------------------------------------------------
# Cortex-M0+ ("m0plus"), from the Arm Cortex-M0+ Technical Reference Manual (DDI 0484),
# "Cortex-M0+ instruction summary" table; single-cycle multiplier as on the RP2040:
#   data processing / ADR / MOV / compare / MULS: 1;  load or store (any width, incl.
#   literal loads): 2;  PUSH/POP/LDM/STM: 1+N (N registers), +2 if POP/LDM writes PC;
#   B<cc>: 1 not taken, 2 taken;  B: 2;  BL: 3;  BX/BLX: 2;  data processing that writes
#   PC (MOV/ADD pc): 2;  DMB/DSB/ISB: 3.
# ESP32-C3 RV32IMC ("rv32"): Espressif publishes no per-instruction timing for the C3, so
#   these are ASSUMPTIONS typical of a short in-order 32-bit core:
#   ALU / LUI / AUIPC (incl. compressed forms): 1;  loads: 2;  stores: 1;
#   conditional branch: 1 not taken, 3 taken;  JAL: 2;  JALR (incl. ret): 3;
#   MUL/MULH*: 1;  DIV/DIVU/REM/REMU: 33.
# Cortex-M4(F) ("m4"; thumbv7em images), from the Arm Cortex-M4 Technical Reference Manual
#   (ARM DDI 0439B), Table 3-1 "Cortex-M4 instruction set summary", with P (pipeline refill
#   after a taken branch, "1 to 3" in the TRM) fixed at 2 and loads/stores NOT pipelined:
#   data processing, shifts, compares, MOV, bit-field, extend, REV/RBIT/CLZ, IT: 1;
#   MUL and the 32x32->64 multiplies (UMULL/SMULL/UMLAL/SMLAL): 1;  MLA/MLS: 2;
#   SDIV/UDIV: 12 (the TRM's worst case of 2-12; early termination is data-dependent);
#   LDR/STR of any width (incl. literal, exclusive): 2;  LDRD/STRD: 3;  LDM/STM/PUSH/POP:
#   1+N;  load or POP/LDM writing PC: +P;  B, BL, BX, BLX: 1+P;  B<cc>, CBZ/CBNZ: 1 not
#   taken, 1+P taken;  TBB/TBH: 2+P;  data processing writing PC: 1+P;  DMB/DSB/ISB: 4;
#   FPU: VLDR/VSTR 2, VLDM/VSTM/VPUSH/VPOP 1+N, VDIV/VSQRT 14, other VFP 1.
#   The TRM's load/store timings (3.3.2: STR [#imm] 1, LDR pipelining, address-generation
#   stall) apply with a board profile that sets m4_ldst_pipelining (mcu/README.md).
# Cortex-M3 ("m3"; the NIST LWC Arduino Due table), Arm Cortex-M3 TRM (DDI 0337I) Table 3.1
#   "Cortex-M3 instruction set summary": as the M4 but SMULL/UMULL "3 to 5" and SMLAL/UMLAL
#   "4 to 7" (early termination: worst case 5 and 7 taken, as SDIV/UDIV's 12), no DSP/SIMD
#   instructions and no FPU (the compiler emits none for -mcpu=cortex-m3); its section 3.3.2
#   "Load/store timings" has the same bullets as the M4's.


@dataclasses.dataclass(frozen=True)
class Target:
    triple: str
    core: str
    model: str | None  # timing model name, None = instruction counts only
    mhz: float | None  # clock used to convert cycles to microseconds
    board: str


# Targets and board profiles: one record each in data/boards.toml (mcu/boardfile.py) ------------
BOARDS_FILE = boardfile.BOARDS_FILE
BoardError = boardfile.BoardError
Board = boardfile.Board
load_boards = boardfile.load_boards
_TARGETS, _BOARDS = boardfile.load()
# The emulable targets; each converts cycles at the clock of the board its counts stand for.
TARGETS = {
    t.triple: Target(t.triple, t.core, t.model, _BOARDS[t.board].mhz,
                     f"{_BOARDS[t.board].chip} @{_BOARDS[t.board].mhz:g} MHz, board profile {t.board}")
    for t in _TARGETS.values() if t.emulable
}
# The board each `mcu --preset counts` image (Rust or C++) stands for.
DEFAULT_BOARD = {t.triple: t.board for t in _TARGETS.values() if t.board and (t.rust or t.cpp)}


def _is_arm(triple: str) -> bool:
    return triple.startswith("thumb")


class CostModel:
    """Per-instruction cost: (base cycles, extra cycles if a conditional branch is taken)."""

    def __init__(self, triple: str, board: Board | None = None):
        self.triple = triple
        self.model = TARGETS[triple].model
        self.ldst_pipe = bool(board and board.m4_ldst_pipelining and self.model in ("m4", "m3"))
        if _is_arm(triple):
            self.md = capstone.Cs(capstone.CS_ARCH_ARM, capstone.CS_MODE_THUMB | capstone.CS_MODE_MCLASS)
        else:
            self.md = capstone.Cs(capstone.CS_ARCH_RISCV, capstone.CS_MODE_RISCV32 | capstone.CS_MODE_RISCVC)
        self.md.detail = True

    def insns(self, code: bytes, addr: int):
        return list(self.md.disasm(code, addr))

    def cost(self, insn) -> tuple[int, int]:
        if self.model == "m0plus":
            return _m0plus(insn)
        if self.model == "rv32":
            return _rv32(insn)
        if self.model == "m4":
            return _m4(insn)
        if self.model == "m3":
            return _m3(insn)
        return (0, 0)

    def block_cost(self, ins) -> int:
        """Base cycles of a straight-line run of instructions (M4 load/store pipelining applied)."""
        base = sum(self.cost(i)[0] for i in ins)
        if self.ldst_pipe:
            base -= sum(1 for i in ins if _m4_store_imm(i))
            base -= sum(1 for a, b in zip(ins, ins[1:]) if _m4_pipelines(a, b))
            base += sum(1 for a, b in zip(ins, ins[1:]) if _m4_agu_stall(a, b))
        return base


_M0_LOADSTORE = {getattr(csarm, "ARM_INS_" + n) for n in
                 ("LDR", "LDRB", "LDRH", "LDRSB", "LDRSH", "STR", "STRB", "STRH")}
_M0_BARRIER = {csarm.ARM_INS_DMB, csarm.ARM_INS_DSB, csarm.ARM_INS_ISB}


def _writes_pc(insn) -> bool:
    ops = insn.operands
    return bool(ops) and ops[0].type == csarm.ARM_OP_REG and ops[0].reg == csarm.ARM_REG_PC


def _m0plus(insn) -> tuple[int, int]:
    i = insn.id
    if i == csarm.ARM_INS_B:
        if insn.cc not in (csarm.ARM_CC_AL, csarm.ARM_CC_INVALID):
            return (1, 1)
        return (2, 0)
    if i == csarm.ARM_INS_BL:
        return (3, 0)
    if i in (csarm.ARM_INS_BX, csarm.ARM_INS_BLX):
        return (2, 0)
    if i in (csarm.ARM_INS_PUSH, csarm.ARM_INS_POP, csarm.ARM_INS_LDM, csarm.ARM_INS_STM):
        regs = [o for o in insn.operands if o.type == csarm.ARM_OP_REG]
        if i in (csarm.ARM_INS_LDM, csarm.ARM_INS_STM):
            regs = regs[1:]  # first operand is the base register
        n = len(regs)
        pc = any(o.reg == csarm.ARM_REG_PC for o in regs) and i in (csarm.ARM_INS_POP, csarm.ARM_INS_LDM)
        return (1 + n + (2 if pc else 0), 0)
    if i in _M0_LOADSTORE:
        return (2, 0)
    if i in _M0_BARRIER:
        return (3, 0)
    if i in (csarm.ARM_INS_MOV, csarm.ARM_INS_ADD) and _writes_pc(insn):
        return (2, 0)
    return (1, 0)


M4_P = 2  # pipeline refill after a taken branch (TRM: 1 to 3)
_M4_LOADSTORE = {getattr(csarm, "ARM_INS_" + n) for n in
                 ("LDR", "LDRB", "LDRH", "LDRSB", "LDRSH", "STR", "STRB", "STRH", "LDRT", "LDRBT", "LDRHT",
                  "LDRSBT", "LDRSHT", "STRT", "STRBT", "STRHT", "LDREX", "LDREXB", "LDREXH", "STREX",
                  "STREXB", "STREXH", "VLDR", "VSTR")}
_M4_DUAL = {csarm.ARM_INS_LDRD, csarm.ARM_INS_STRD}
_M4_MULTI = {getattr(csarm, "ARM_INS_" + n) for n in
             ("PUSH", "POP", "LDM", "STM", "LDMDB", "STMDB", "VPUSH", "VPOP", "VLDMIA", "VLDMDB", "VSTMIA", "VSTMDB")
             if hasattr(csarm, "ARM_INS_" + n)}
_M4_BASE_REG = {getattr(csarm, "ARM_INS_" + n) for n in ("LDM", "STM", "LDMDB", "STMDB", "VLDMIA", "VLDMDB", "VSTMIA", "VSTMDB")
                if hasattr(csarm, "ARM_INS_" + n)}
_M4_MLA = {csarm.ARM_INS_MLA, csarm.ARM_INS_MLS}
_M4_DIV = {csarm.ARM_INS_SDIV, csarm.ARM_INS_UDIV}
_M4_FDIV = {csarm.ARM_INS_VDIV, csarm.ARM_INS_VSQRT}


def _m4(insn) -> tuple[int, int]:
    i, P = insn.id, M4_P
    if i == csarm.ARM_INS_B:
        if insn.cc not in (csarm.ARM_CC_AL, csarm.ARM_CC_INVALID):
            return (1, P)
        return (1 + P, 0)
    if i in (csarm.ARM_INS_CBZ, csarm.ARM_INS_CBNZ):
        return (1, P)
    if i in (csarm.ARM_INS_BL, csarm.ARM_INS_BX, csarm.ARM_INS_BLX):
        return (1 + P, 0)
    if i in (csarm.ARM_INS_TBB, csarm.ARM_INS_TBH):
        return (2 + P, 0)
    if i in _M4_MULTI:
        regs = [o for o in insn.operands if o.type == csarm.ARM_OP_REG]
        if i in _M4_BASE_REG:
            regs = regs[1:]  # first operand is the base register
        pc = any(o.reg == csarm.ARM_REG_PC for o in regs)
        return (1 + len(regs) + (P if pc else 0), 0)
    if i in _M4_DUAL:
        return (3, 0)
    if i in _M4_LOADSTORE:
        return (2 + (P if i == csarm.ARM_INS_LDR and _writes_pc(insn) else 0), 0)
    if i in _M4_MLA:
        return (2, 0)
    if i in _M4_DIV:
        return (12, 0)
    if i in _M4_FDIV:
        return (14, 0)
    if i in _M0_BARRIER:
        return (4, 0)
    if _writes_pc(insn):
        return (1 + P, 0)
    return (1, 0)


_M3_LONG_MUL = {csarm.ARM_INS_UMULL, csarm.ARM_INS_SMULL}
_M3_LONG_MLA = {csarm.ARM_INS_UMLAL, csarm.ARM_INS_SMLAL}


def _m3(insn) -> tuple[int, int]:
    """Cortex-M3 TRM Table 3.1: the M4's costs but long multiplies 3-5 / 4-7 (worst case taken)."""
    if insn.id in _M3_LONG_MUL:
        return (5, 0)
    if insn.id in _M3_LONG_MLA:
        return (7, 0)
    return _m4(insn)


def _m4_single_ldst(insn) -> bool:
    return insn.id in _M4_LOADSTORE and insn.id not in (csarm.ARM_INS_VLDR, csarm.ARM_INS_VSTR)


def _m4_mem(insn):
    return next((o.mem for o in insn.operands if o.type == csarm.ARM_OP_MEM), None)


def _m4_is_store(insn) -> bool:
    return insn.mnemonic.startswith("str")


def _m4_addr_regs(insn) -> set:
    """Registers a load/store computes its address from (LDM/STM/PUSH/POP: the base / SP)."""
    m = _m4_mem(insn)
    if m is not None:
        return {r for r in (m.base, m.index) if r}
    if insn.id in _M4_MULTI:
        if insn.id in _M4_BASE_REG:
            return {insn.operands[0].reg}
        return {csarm.ARM_REG_SP}
    return set()


def _m4_is_ldst(insn) -> bool:
    return insn.id in _M4_LOADSTORE or insn.id in _M4_DUAL or insn.id in _M4_MULTI


def _m4_store_imm(insn) -> bool:
    """STR/STRB/STRH with an immediate offset and no writeback: one cycle (TRM 3.3.2)."""
    m = _m4_mem(insn)
    return (insn.id in (csarm.ARM_INS_STR, csarm.ARM_INS_STRB, csarm.ARM_INS_STRH) and m is not None
            and m.index == 0 and not getattr(insn, "writeback", False))


def _m4_pipelines(prev, cur) -> bool:
    """Cortex-M4 TRM 3.3.2: a single LDR/STR right after a single LDR pipelines (costs 1, not 2)
    unless the first load's destination is used to compute the second's address; nothing
    pipelines after a store, nor with writeback, nor a load into PC."""
    if not (_m4_single_ldst(prev) and _m4_single_ldst(cur)) or _m4_is_store(prev):
        return False
    if getattr(prev, "writeback", False) or getattr(cur, "writeback", False) or _writes_pc(cur) or _writes_pc(prev):
        return False
    if _m4_store_imm(cur):
        return False  # already one cycle
    dest = prev.operands[0].reg if prev.operands and prev.operands[0].type == csarm.ARM_OP_REG else None
    return dest not in _m4_addr_regs(cur)


def _m4_agu_stall(prev, cur) -> bool:
    """Cortex-M4 TRM 3.3.2: a load/store whose address depends on the result of the data
    processing instruction right before it stalls one cycle (no forwarding path)."""
    if not _m4_is_ldst(cur) or _m4_is_ldst(prev) or prev.group(csarm.ARM_GRP_JUMP):
        return False
    try:
        written = set(prev.regs_access()[1])
    except capstone.CsError:
        return False
    return bool(written & _m4_addr_regs(cur))


_RV_BRANCH = {"beq", "bne", "blt", "bge", "bltu", "bgeu", "beqz", "bnez", "blez", "bgez",
              "bltz", "bgtz", "bgt", "ble", "bgtu", "bleu"}
_RV_LOAD = {"lb", "lh", "lw", "lbu", "lhu", "lwsp"}
_RV_STORE = {"sb", "sh", "sw", "swsp"}
_RV_JAL = {"jal", "j"}
_RV_JALR = {"jalr", "jr", "ret"}
_RV_MUL = {"mul", "mulh", "mulhsu", "mulhu"}
_RV_DIV = {"div", "divu", "rem", "remu"}


def _rv32(insn) -> tuple[int, int]:
    m = insn.mnemonic
    if m.startswith("c."):
        m = m[2:]
    if m in _RV_BRANCH:
        return (1, 2)
    if m in _RV_LOAD:
        return (2, 0)
    if m in _RV_STORE:
        return (1, 0)
    if m in _RV_JAL:
        return (2, 0)
    if m in _RV_JALR:
        return (3, 0)
    if m in _RV_MUL:
        return (1, 0)
    if m in _RV_DIV:
        return (33, 0)
    return (1, 0)


class InsnCapExceeded(RuntimeError):
    pass


@dataclasses.dataclass
class Image:
    path: str
    segments: list  # (vaddr, bytes)
    symbols: dict
    bss_end: int
    stack_top: int
    key_bytes: int
    iv_bytes: int
    tag_bytes: int = 0  # AEAD images: tag written right after the message (LWC_TAG_BYTES)


def load_image(path: str) -> Image:
    with open(path, "rb") as f:
        elf = ELFFile(f)
        segs = [(s["p_vaddr"], s.data()) for s in elf.iter_segments() if s["p_type"] == "PT_LOAD"]
        syms = {}
        for sec in elf.iter_sections():
            if isinstance(sec, SymbolTableSection):
                for s in sec.iter_symbols():
                    if s.name:
                        syms[s.name] = s["st_value"]
        mem = {}
        for name in ("LWC_KEY_BYTES", "LWC_IV_BYTES", "LWC_TAG_BYTES"):
            if name not in syms:  # LWC_TAG_BYTES: only block/AEAD images have it
                continue
            addr = syms[name]
            for vaddr, data in segs:
                if vaddr <= addr < vaddr + len(data):
                    mem[name] = struct.unpack_from("<I", data, addr - vaddr)[0]
    return Image(path, segs, syms, syms["__bss_end"], syms["__stack_top"],
                 mem["LWC_KEY_BYTES"], mem["LWC_IV_BYTES"], mem.get("LWC_TAG_BYTES", 0))


@dataclasses.dataclass
class Phase:
    insns: int
    cycles: int | None


@dataclasses.dataclass
class Result:
    init: Phase  # the first (cold) call pair on a fresh board
    keystream: Phase
    stack_bytes: int
    out: bytes
    rc: tuple
    warm_init: Phase | None = None  # the same pair again with the caches kept (run(warm=True))
    warm_keystream: Phase | None = None


class Emulator:
    def __init__(self, image: Image, triple: str, mode: str = "block", board: Board | None = None,
                 max_insns: int = 2_000_000_000, profile: bool = False):
        if board is not None and board.triple != triple:
            raise ValueError(f"board {board.id} runs {board.triple}, not {triple}")
        self.img, self.triple, self.mode, self.board = image, triple, mode, board
        self.arm = _is_arm(triple)
        self.costs = CostModel(triple, board)
        self.block_cache: dict = {}
        self.insn_cache: dict = {}
        self.max_insns = max_insns
        # instruction fetch model: stalls per line fetch that misses (code in flash / XIP)
        self.fetch = bool(board and board.fetch_stalls() and self.costs.model)
        # board.flash_data_stall: data reads from flash (literal pools, const tables) pay the
        # flash's miss cycles each, uncached (an instruction-only cache)
        self.data_stall = bool(self.fetch and board.flash_data_stall and board.code_in == "flash")
        if self.fetch:
            self.line_bytes, self.miss = board.fetch_line_bytes, board.miss_cycles
            self.ways = board.cache_ways
            self.sets = board.cache_lines // board.cache_ways if board.cache_lines else 0
        self.profile: dict | None = {} if profile else None  # block addr -> [executions, cycles]
        # when a list-like (array('Q')): every executed block as addr << 16 | size, so a fetch
        # model can re-price the run without re-emulating it (mcu/cortexm_fit.py)
        self.trace = None
        # when an int: data reads from flash (literal pools, const tables) are counted into it
        self.flash_reads: int | None = None
        self._reset_fetch()

    def _reset_fetch(self):
        """A fresh board: empty cache, no line buffered."""
        self.cur_line = -1
        self.cache = [[] for _ in range(self.sets)] if self.fetch and self.sets else None
        self.stall_cycles = 0

    def _fetch_lines(self, lines) -> int:
        """Stall cycles for entering these lines in order (sequential re-use of the current line
        is free; with a cache, a hit is free; every other line fetch costs miss cycles)."""
        stall = 0
        for ln in lines:
            if ln == self.cur_line:
                continue
            self.cur_line = ln
            if self.cache is not None:
                s = self.cache[ln % self.sets]
                if ln in s:
                    if s[-1] != ln:
                        s.remove(ln)
                        s.append(ln)  # most recently used last
                    continue
                s.append(ln)
                if len(s) > self.ways:
                    del s[0]
            stall += self.miss
        self.stall_cycles += stall
        return stall

    def _new_uc(self):
        if self.arm:
            uc = unicorn.Uc(unicorn.UC_ARCH_ARM, unicorn.UC_MODE_THUMB | unicorn.UC_MODE_MCLASS)
            uc.ctl_set_cpu_model(ua.UC_CPU_ARM_CORTEX_M0 if self.triple.startswith("thumbv6m")
                                 else ua.UC_CPU_ARM_CORTEX_M3 if self.triple.startswith("thumbv7m-")
                                 else ua.UC_CPU_ARM_CORTEX_M4)
        else:
            uc = unicorn.Uc(unicorn.UC_ARCH_RISCV, unicorn.UC_MODE_RISCV32)
        for base, size in (FLASH, RAM, HOST):
            uc.mem_map(base, size)
        uc.mem_map(SENTINEL, 0x1000)
        for vaddr, data in self.img.segments:
            if data:
                uc.mem_write(vaddr, data)
        lo = (self.img.bss_end + 3) & ~3
        uc.mem_write(lo, struct.pack("<I", PAINT) * ((self.img.stack_top - lo) // 4))
        return uc

    # counting hooks ------------------------------------------------------------------
    def _block_info(self, uc, addr, size):
        key = (addr, size)
        info = self.block_cache.get(key)
        if info is None:
            code = bytes(uc.mem_read(addr, size))
            ins = self.costs.insns(code, addr)
            if sum(i.size for i in ins) != size:
                raise RuntimeError(f"capstone could not decode block {addr:#x}+{size}")
            base = self.costs.block_cost(ins)
            extra = self.costs.cost(ins[-1])[1]
            lines = ()
            if self.fetch and FLASH[0] <= addr < FLASH[0] + FLASH[1]:
                lb = self.line_bytes
                seq = []
                for i in ins:
                    for ln in range(i.address // lb, (i.address + i.size - 1) // lb + 1):
                        if not seq or seq[-1] != ln:
                            seq.append(ln)
                lines = tuple(seq)
            info = (len(ins), base, extra, addr + size, lines)
            self.block_cache[key] = info
        return info

    def _on_block(self, uc, addr, size, st):
        if addr == SENTINEL:
            return
        if st[3] and addr != st[4]:
            st[1] += st[3]
        n, base, extra, fall, lines = self._block_info(uc, addr, size)
        cyc = base + (self._fetch_lines(lines) if lines else 0)
        if self.trace is not None:
            self.trace.append(addr << 16 | size)
        st[0] += n
        st[1] += cyc
        st[3], st[4] = extra, fall
        if self.profile is not None:
            p = self.profile.setdefault(addr, [0, 0, size])
            p[0] += 1
            p[1] += cyc

    def _on_insn(self, uc, addr, size, st):
        if addr == SENTINEL:
            return
        if st[3] and addr != st[4]:
            st[1] += st[3]
        c = self.insn_cache.get(addr)
        if c is None:
            ins = self.costs.insns(bytes(uc.mem_read(addr, size)), addr)
            c = self.costs.cost(ins[0])
            lines = ()
            if self.fetch and FLASH[0] <= addr < FLASH[0] + FLASH[1]:
                lines = tuple(range(addr // self.line_bytes, (addr + size - 1) // self.line_bytes + 1))
            c = (c[0], c[1], lines)
            self.insn_cache[addr] = c
        st[0] += 1
        st[1] += c[0] + (self._fetch_lines(c[2]) if c[2] else 0)
        st[3], st[4] = c[1], addr + size

    def _on_flash_read(self, uc, access, addr, size, value, reads):
        reads[0] += 1

    def call(self, uc, fn: str, a0: int = 0, a1: int = 0, a2: int | None = None, a3: int | None = None) -> Phase:
        """Call fn(a0, a1, a2, a3) on a machine from new_machine(); raises InsnCapExceeded past max_insns."""
        return self._call(uc, fn, a0, a1, a2, a3)

    def encrypt_ad(self, key: bytes, nonce: bytes, msg: bytes, ad: bytes) -> tuple[tuple, bytes]:
        """On a fresh board: `lwc_init(key, nonce)`, then `lwc_encrypt_ad` of `msg` with the
        associated data `ad` (an `ad-entry` build of an AEAD image). (return codes, ciphertext ‖ tag)."""
        if "lwc_encrypt_ad" not in self.img.symbols:
            raise ValueError(f"{self.img.path}: no lwc_encrypt_ad (build the image with the ad-entry feature)")
        if len(ad) > AD_MAX or len(msg) + self.img.tag_bytes > HOST[0] + HOST[1] - OUT_AT:
            raise ValueError(f"associated data ({len(ad)} B) or message ({len(msg)} B) larger than the host buffers")
        uc = self.new_machine()
        uc.mem_write(KEY_AT, key)
        uc.mem_write(IV_AT, nonce)
        uc.mem_write(AD_AT, ad)
        uc.mem_write(OUT_AT, msg)
        self._call(uc, "lwc_init", KEY_AT, IV_AT)
        self._call(uc, "lwc_encrypt_ad", OUT_AT, 8 * len(msg), AD_AT, len(ad))
        return tuple(self._rc), bytes(uc.mem_read(OUT_AT, len(msg) + self.img.tag_bytes))

    def new_machine(self):
        """A fresh board: image loaded, stack painted, empty instruction cache."""
        self._rc = []
        self._reset_fetch()
        return self._new_uc()

    def _call(self, uc, fn: str, a0: int, a1: int, a2: int | None = None, a3: int | None = None) -> Phase:
        # a2/a3 only for a four-argument entry: the two-argument calls leave the registers as
        # the previous call did, as the counts always had them
        st = [0, 0, 0, 0, 0]  # insns, cycles, pending taken-extra, its fall-through
        hook = uc.hook_add(unicorn.UC_HOOK_BLOCK if self.mode == "block" else unicorn.UC_HOOK_CODE,
                           self._on_block if self.mode == "block" else self._on_insn, st)
        addr = self.img.symbols[fn]
        rd, reads = None, [0]
        if self.flash_reads is not None or self.data_stall:
            rd = uc.hook_add(unicorn.UC_HOOK_MEM_READ, self._on_flash_read, reads, FLASH[0], FLASH[0] + FLASH[1] - 1)
        if self.arm:
            uc.reg_write(ua.UC_ARM_REG_SP, self.img.stack_top)
            uc.reg_write(ua.UC_ARM_REG_R0, a0)
            uc.reg_write(ua.UC_ARM_REG_R1, a1)
            if a2 is not None:
                uc.reg_write(ua.UC_ARM_REG_R2, a2)
                uc.reg_write(ua.UC_ARM_REG_R3, a3 or 0)
            uc.reg_write(ua.UC_ARM_REG_LR, SENTINEL | 1)
            uc.emu_start(addr | 1, SENTINEL, count=self.max_insns)
            pc, rc = uc.reg_read(ua.UC_ARM_REG_PC), uc.reg_read(ua.UC_ARM_REG_R0)
        else:
            uc.reg_write(ur.UC_RISCV_REG_SP, self.img.stack_top)
            uc.reg_write(ur.UC_RISCV_REG_A0, a0)
            uc.reg_write(ur.UC_RISCV_REG_A1, a1)
            if a2 is not None:
                uc.reg_write(ur.UC_RISCV_REG_A2, a2)
                uc.reg_write(ur.UC_RISCV_REG_A3, a3 or 0)
            uc.reg_write(ur.UC_RISCV_REG_RA, SENTINEL)
            uc.emu_start(addr, SENTINEL, count=self.max_insns)
            pc, rc = uc.reg_read(ur.UC_RISCV_REG_PC), uc.reg_read(ur.UC_RISCV_REG_A0)
        uc.hook_del(hook)
        if rd is not None:
            uc.hook_del(rd)
            if self.flash_reads is not None:
                self.flash_reads += reads[0]
            if self.data_stall:  # each data read from flash waits for the flash, uncached
                st[1] += reads[0] * self.miss
                self.stall_cycles += reads[0] * self.miss
        if (pc & ~1) != SENTINEL:
            if st[0] >= self.max_insns:
                raise InsnCapExceeded(f"{fn}: more than {self.max_insns:,} instructions (cap)")
            raise RuntimeError(f"{fn} did not return (pc={pc:#x})")
        if st[3] and SENTINEL != st[4]:  # last block ended in a taken conditional branch (never: it returns)
            st[1] += st[3]
        cyc = st[1] if self.costs.model else None
        self._rc.append(rc & 0xFFFF_FFFF)
        return Phase(st[0], cyc)

    def _fresh_memory(self, uc, key: bytes, iv: bytes):
        """RAM and the host buffers as after new_machine(); the fetch cache is left as it is."""
        uc.mem_write(RAM[0], bytes(RAM[1]))
        uc.mem_write(HOST[0], bytes(HOST[1]))
        for vaddr, data in self.img.segments:
            if data and RAM[0] <= vaddr < RAM[0] + RAM[1]:
                uc.mem_write(vaddr, data)
        lo = (self.img.bss_end + 3) & ~3
        uc.mem_write(lo, struct.pack("<I", PAINT) * ((self.img.stack_top - lo) // 4))
        uc.mem_write(KEY_AT, key)
        uc.mem_write(IV_AT, iv)

    def message(self, uc, nbits: int, key: bytes | None = None, iv: bytes | None = None) -> tuple[Phase, Phase]:
        """One message on this machine: `lwc_init` then `lwc_keystream(out, nbits)`, with RAM, key,
        IV and output buffer as on a fresh board but the instruction cache as the previous
        calls left it. The first pair on a new_machine() is the cold one; a repeat runs the
        same instructions, so the cycles differ only by the cache (and it is the steady
        state: an LRU cache ends an identical access sequence in a state that gives the next
        one the same hits). No line stays buffered between two messages: other code runs."""
        key = key if key is not None else default_key(self.img.key_bytes)
        iv = iv if iv is not None else default_iv(self.img.iv_bytes)
        self._fresh_memory(uc, key, iv)
        self.cur_line = -1
        init = self._call(uc, "lwc_init", KEY_AT, IV_AT)
        ks = self._call(uc, "lwc_keystream", OUT_AT, nbits)
        return init, ks

    def run(self, nbits: int, key: bytes | None = None, iv: bytes | None = None, warm: bool = False) -> Result:
        """The cold call pair on a fresh board; with `warm`, the same pair again on that board
        (caches kept) as the steady state of a loop of messages."""
        uc = self.new_machine()
        init, ks = self.message(uc, nbits, key, iv)
        out = bytes(uc.mem_read(OUT_AT, (nbits + 7) // 8 + self.img.tag_bytes))
        lo = (self.img.bss_end + 3) & ~3
        stack = bytes(uc.mem_read(lo, self.img.stack_top - lo))
        deepest = self.img.stack_top
        pw = struct.pack("<I", PAINT)
        for off in range(0, len(stack), 4):
            if stack[off:off + 4] != pw:
                deepest = lo + off
                break
        rc = tuple(self._rc)
        r = Result(init, ks, self.img.stack_top - deepest, out, rc)
        if warm:
            r.warm_init, r.warm_keystream = self.message(uc, nbits, key, iv)
            again = bytes(uc.mem_read(OUT_AT, len(out)))
            # The repeat must run the cold pair's instructions: the same work, only the cache warm.
            if (again, tuple(self._rc[2:])) != (out, rc) or (r.warm_init.insns, r.warm_keystream.insns) != (
                    init.insns, ks.insns):
                raise RuntimeError(f"{self.img.path}: the repeated call pair ran other instructions than the first")
        return r


def default_key(n: int) -> bytes:
    """The fixed key of all counts: bytes 0x00, 0x11, 0x22, ... (n bytes)."""
    return bytes((0x11 * i) & 0xFF for i in range(n))


def default_iv(n: int) -> bytes:
    """The fixed IV of all counts: bytes 0xF0, 0xE1, 0xD2, ... (n bytes)."""
    return bytes((0xF0 - 0x0F * i) & 0xFF for i in range(n))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("elf")
    ap.add_argument("target", choices=sorted(TARGETS))
    ap.add_argument("nbits", type=int)
    ap.add_argument("--key")
    ap.add_argument("--iv")
    ap.add_argument("--mode", choices=("block", "insn"), default="block")
    ap.add_argument("--board", help="board profile id of data/boards.toml (default: the core model alone)")
    ap.add_argument("--warm", action="store_true", help="also the same calls again with the caches kept")
    a = ap.parse_args(argv)
    board = None
    if a.board:
        try:
            boards = load_boards()
        except BoardError as e:
            print(f"error: {e}", file=sys.stderr)
            return 2
        if a.board not in boards:
            print(f"error: --board: unknown board {a.board!r} (known: {', '.join(sorted(boards))})", file=sys.stderr)
            return 2
        board = boards[a.board]
        if board.triple != a.target:
            print(f"error: --board: {a.board} runs {board.triple}, not {a.target}", file=sys.stderr)
            return 2
    img = load_image(a.elf)
    r = Emulator(img, a.target, a.mode, board=board).run(
        a.nbits, bytes.fromhex(a.key) if a.key else None, bytes.fromhex(a.iv) if a.iv else None, warm=a.warm)
    print(f"init: {r.init.insns} insns, {r.init.cycles} cycles; keystream({a.nbits}): "
          f"{r.keystream.insns} insns, {r.keystream.cycles} cycles; stack {r.stack_bytes} B; rc {r.rc}")
    if r.warm_init is not None:
        print(f"warm: init {r.warm_init.cycles} cycles; keystream({a.nbits}) {r.warm_keystream.cycles} cycles")
    print("keystream:", r.out.hex())
    return 0


if __name__ == "__main__":
    sys.exit(main())
