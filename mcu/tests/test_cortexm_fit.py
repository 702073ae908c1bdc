"""Tests of the held-out fetch fit of a Cortex-M board (mcu/cortexm_fit.py, [board.nano33ble.fit]):
the fetch parameters move a hand-made M4 loop's cycles exactly as counted by hand, the C fetch
model that re-prices recorded traces gives the same misses as the emulator, the grid search
picks the training half's best point (hand-computed errors), and the board file's recorded fit
agrees with its per-row table (data/nano33ble-fit.csv) and with a re-emulation of a sample.
"""
from __future__ import annotations

import array
import csv
import dataclasses
import statistics
import struct

import pytest

import cortexm_fit
import emulate
import nistlwc
from test_nistlwc import _shared, _toolchain

ADDS_R1 = 0x3101   # adds r1, #1
SUBS_R0 = 0x3801   # subs r0, #1
BX_LR = 0x4770     # bx lr
M4 = "thumbv7em-none-eabihf"


def _bne(from_hw: int, to_hw: int) -> int:
    off = (to_hw * 2 - (from_hw * 2 + 4)) // 2
    return 0xD100 | (off & 0xFF)


def _loop_image():
    """loop: 16 x adds r1,#1; subs r0,#1; bne loop; bx lr at the flash base: the loop is bytes
    0..35, so with 16-byte lines every pass enters lines 0, 1, 2 (bne at 34, bx lr at 36)."""
    hw = [ADDS_R1] * 16 + [SUBS_R0]
    hw.append(_bne(len(hw), 0))
    hw.append(BX_LR)
    code = struct.pack(f"<{len(hw)}H", *hw)
    return emulate.Image("hand", [(emulate.FLASH[0], code)], {"loop": emulate.FLASH[0]}, emulate.RAM[0] + 0x100,
                         emulate.RAM[0] + emulate.RAM[1], 0, 0)


def _nano(**kw):
    return dataclasses.replace(emulate.load_boards()["nano33ble"], **kw)


def _run(board, n):
    emu = emulate.Emulator(_loop_image(), M4, board=board)
    uc = emu.new_machine()
    emu.trace = array.array("Q")
    ph = emu.call(uc, "loop", n, 0)
    return ph, emu.trace


N = 50
# Cortex-M4 TRM: adds/subs 1; bne 1 + P taken (P = 2), 1 not taken; bx lr 1 + P
CORE = N * (16 + 1 + (1 + emulate.M4_P)) - emulate.M4_P + (1 + emulate.M4_P)


@pytest.mark.parametrize("lines,ways,stall_lines", [
    (0, 1, 3 * N),            # no cache: lines 0, 1, 2 fetched anew on every pass
    (4, 2, 3),                # 2 sets x 2 ways: lines 0 and 2 share set 0 and both stay: 3 cold misses
    (2, 1, 3 + 2 * (N - 1)),  # direct-mapped, 2 sets: lines 0 and 2 evict each other on every pass
    (2, 2, 3 * N),            # one set of 2 ways, 3 lines in turn: LRU evicts the next one needed
])
@pytest.mark.parametrize("miss", [1, 3])
def test_fetch_parameters_move_a_hand_loop_by_hand_counted_misses(lines, ways, stall_lines, miss):
    core, _ = _run(_nano(flash_ws=0, miss_cycles=0, cache_lines=0), N)
    assert core.cycles == CORE
    ph, trace = _run(_nano(flash_ws=miss, miss_cycles=miss, fetch_line_bytes=16, cache_lines=lines,
                           cache_ways=ways), N)
    assert ph.cycles == CORE + stall_lines * miss
    assert ph.insns == core.insns
    # the C model re-prices the recorded trace to the same misses
    assert cortexm_fit.misses(trace, 0, 16, lines, ways) == (0, stall_lines)


def test_a_trace_split_counts_only_the_misses_after_it():
    _, trace = _run(_nano(), N)
    # the first pass's blocks are the prepare part: its 3 cold misses fall before the split
    before, after = cortexm_fit.misses(trace, 1, 16, 4, 2)
    assert (before, after) == (3, 0)


@pytest.mark.parametrize("data_stall", [False, True])
@pytest.mark.parametrize("miss", [1, 3])
def test_a_data_read_from_flash_waits_the_miss_cycles_when_the_profile_says_so(data_stall, miss):
    # f: ldr r2, [pc, #4]; bx lr; .word 0; .word 0x56781234 -- the literal at byte 8, in line 0
    code = struct.pack("<6H", 0x4A01, BX_LR, 0, 0, 0x1234, 0x5678)
    img = emulate.Image("hand", [(emulate.FLASH[0], code)], {"f": emulate.FLASH[0]}, emulate.RAM[0] + 0x100,
                        emulate.RAM[0] + emulate.RAM[1], 0, 0)
    board = _nano(flash_ws=miss, miss_cycles=miss, fetch_line_bytes=16, cache_lines=0, flash_data_stall=data_stall)
    emu = emulate.Emulator(img, M4, board=board)
    uc = emu.new_machine()
    emu.flash_reads = 0
    ph = emu.call(uc, "f", 0, 0)
    # M4 TRM: ldr 2, bx lr 1 + P; one line fetched (both instructions in line 0); one data read
    assert ph.cycles == 2 + (1 + emulate.M4_P) + miss + (miss if data_stall else 0)
    assert emu.flash_reads == 1
    assert uc.reg_read(emulate.ua.UC_ARM_REG_R2) == 0x56781234


def _impl(sub, kind, core_slope, miss_per_byte: dict):
    """A recorded row with published slope 100 c/B: enc(0:128) 1000 cycles with no misses;
    enc(0:1024) 896 x core_slope cycles more, with 896 x k misses for geometry g."""
    lo = (1000, {g: 0 for g in miss_per_byte}, 0)
    hi = (1000 + 896 * core_slope, {g: 896 * k for g, k in miss_per_byte.items()}, 0)
    return cortexm_fit.Impl(f"{sub}/v/i", sub, kind, 100.0, {"0:128": lo, "0:1024": hi})


def test_the_grid_search_picks_the_training_best_and_judges_on_the_held_out_half():
    g1, g2 = (16, 0, 1), (32, 0, 1)
    grid = {"miss_cycles": [0, 1, 2], "fetch_line_bytes": [16, 32], "cache_bytes": [0], "cache_ways": [1]}
    impls = [_impl("a", "asm", 90, {g1: 5, g2: 10}), _impl("b", "c", 80, {g1: 10, g2: 10}),
             _impl("z", "asm", 100, {g1: 1, g2: 0})]
    # training errors by hand: g1 m=2: a 90+10 = 100 (0 %), b 80+20 = 100 (0 %): median 0;
    # every other point has a non-zero median (g2 m=1: 0 and 10 %, 5 %; g1 m=1: 5 and 10 %)
    r = cortexm_fit.fit(impls, grid, ["a", "b"])
    assert r["best"] == {"miss_cycles": 2, "fetch_line_bytes": 16, "cache_lines": 0, "cache_ways": 1}
    assert r["train_median"] == 0.0
    # held out: z at g1 m=2 = 100 + 2 = 102 c/B: +2 %
    assert r["held_out_median"] == pytest.approx(2.0) and r["held_out_asm_median"] == pytest.approx(2.0)
    assert (r["train_rows"], r["held_out_rows"]) == (2, 1)
    # the core alone (m=0): a -10 %, b -20 %
    assert r["core_only"]["train_median"] == pytest.approx(15.0)


def test_the_split_is_every_second_submission_from_the_second():
    assert cortexm_fit.train_submissions(["b", "a", "c", "a", "d", "e"]) == ["b", "d"]
