"""Cold first call and warm steady state (mcu/emulate.py `Emulator.run(..., warm=True)`), on
hand-assembled Thumb code whose cycles are computed by hand below.

The image: `lwc_init` at the flash base (line 0 of the 8-byte fetch lines), `lwc_keystream` at
+8: four `adds` (line 1), then `subs r1,#1; bne` back to the first `adds`, `movs r0,#0; bx lr`
(line 2), so every pass of the loop enters lines 1 and 2. Cortex-M0+ TRM costs: adds/subs/movs
1, bne 2 taken / 1 not, bx 2. With nbits = N passes:
    init      = movs + bx                     = 3
    keystream = 7 per pass, 1 less on the last pass, + movs + bx = 7N + 2
"""
from __future__ import annotations

import dataclasses
import struct

import emulate

MOVS_R0_0 = 0x2000  # movs r0, #0
ADDS_R2_1 = 0x3201  # adds r2, #1
SUBS_R1_1 = 0x3901  # subs r1, #1
BNE_BACK = 0xD1F9  # bne to the first adds: -7 halfwords from this one's address + 4
BX_LR = 0x4770
NOP = 0xBF00  # pads lwc_init to its 8-byte line

N = 4
CORE_INIT = 1 + 2
CORE_KS = 7 * N - 1 + 1 + 2


def _image() -> emulate.Image:
    hw = [MOVS_R0_0, BX_LR, NOP, NOP,  # line 0: lwc_init
          ADDS_R2_1, ADDS_R2_1, ADDS_R2_1, ADDS_R2_1,  # line 1: loop body
          SUBS_R1_1, BNE_BACK, MOVS_R0_0, BX_LR]  # line 2
    code = struct.pack(f"<{len(hw)}H", *hw)
    base = emulate.FLASH[0]
    return emulate.Image("hand", [(base, code)], {"lwc_init": base, "lwc_keystream": base + 8},
                         emulate.RAM[0] + 0x100, emulate.RAM[0] + emulate.RAM[1], 0, 0)


def _board(bid: str, **kw):
    return dataclasses.replace(emulate.load_boards()[bid], **kw)


def _run(board, triple="thumbv6m-none-eabi"):
    return emulate.Emulator(_image(), triple, board=board).run(N, warm=True)


def test_the_hand_code_is_what_the_comments_say():
    md = emulate.CostModel("thumbv6m-none-eabi").md
    code = b"".join(data for _, data in _image().segments)
    got = [(i.address - emulate.FLASH[0], i.mnemonic, i.op_str) for i in md.disasm(code, emulate.FLASH[0])]
    assert got[4:] == [(8, "adds", "r2, #1"), (10, "adds", "r2, #1"), (12, "adds", "r2, #1"), (14, "adds", "r2, #1"),
                       (16, "subs", "r1, #1"), (18, "bne", "#0x10000008"), (20, "movs", "r0, #0"), (22, "bx", "lr")]


def test_rp2040_xip_cold_call_pays_the_line_fills_and_the_warm_repeat_none():
    rp = emulate.load_boards()["rp2040"]
    assert (rp.miss_cycles, rp.fetch_line_bytes, rp.cache_lines, rp.cache_ways) == (56, 8, 2048, 2)
    r = _run(rp)
    # cold: init fills line 0, the keystream lines 1 and 2 on its first pass; later passes hit
    assert (r.init.cycles, r.keystream.cycles) == (CORE_INIT + 56, CORE_KS + 2 * 56) == (59, 142)
    # warm: the same calls again with the 16 KB cache kept: every line hits
    assert (r.warm_init.cycles, r.warm_keystream.cycles) == (CORE_INIT, CORE_KS) == (3, 30)
    # same instructions both times: only the cache differs
    assert (r.warm_init.insns, r.warm_keystream.insns) == (r.init.insns, r.keystream.insns) == (2, 6 * N + 2)


def test_warm_is_the_steady_state_even_when_lines_conflict():
    # Two direct-mapped lines: line 2 evicts line 0 (same set) and the other way round, so even
    # in a loop lwc_init misses once and the keystream once (line 2); line 1 stays.
    small = _board("rp2040", cache_lines=2, cache_ways=1)
    emu = emulate.Emulator(_image(), "thumbv6m-none-eabi", board=small)
    r = emu.run(N, warm=True)
    assert (r.init.cycles, r.keystream.cycles) == (CORE_INIT + 56, CORE_KS + 2 * 56)
    assert (r.warm_init.cycles, r.warm_keystream.cycles) == (CORE_INIT + 56, CORE_KS + 56)
    # call pairs on one machine: the first is run's cold pair, the second its warm one, and a
    # third and fourth cost what the second did: one repeat reaches the steady state
    uc = emu.new_machine()
    pairs = [tuple(p.cycles for p in emu.message(uc, N)) for _ in range(4)]
    assert pairs == [(r.init.cycles, r.keystream.cycles)] + [(r.warm_init.cycles, r.warm_keystream.cycles)] * 3


# The M4 figures of the hand code. Cortex-M4 TRM: adds/subs/movs 1, bx / taken bne 1+P.
M4_INIT = 1 + 1 + emulate.M4_P
M4_KS = 4 * N + N + (N - 1) * (1 + emulate.M4_P) + 1 + 1 + (1 + emulate.M4_P)


def test_boards_without_a_cache_give_warm_equal_to_cold():
    # An M4 with no wait states and no cache: no fetch model.
    r = _run(_board("nrf52840", flash_ws=0, miss_cycles=0, cache_lines=0), "thumbv7em-none-eabihf")
    assert (r.init.cycles, r.keystream.cycles) == (M4_INIT, M4_KS)
    assert (r.warm_init.cycles, r.warm_keystream.cycles) == (r.init.cycles, r.keystream.cycles)
    # Due-like: 4 wait states per 16-byte line, no cache, only the current line buffered. init
    # fetches line 0; the keystream starts in line 0 (still buffered), enters line 1 and then
    # every pass re-enters line 0 and line 1. The warm call pair starts with no line buffered,
    # as the cold one does (other code runs between two messages), so it pays the same.
    due = _board("due", triple="thumbv6m-none-eabi")
    r = _run(due)
    assert (r.init.cycles, r.keystream.cycles) == (CORE_INIT + 4, CORE_KS + 4 + (N - 1) * 2 * 4)
    assert (r.warm_init.cycles, r.warm_keystream.cycles) == (r.init.cycles, r.keystream.cycles)


def test_the_nrf52840_pays_the_nano33ble_fitted_fetch():
    # Same chip as the Nano 33 BLE, same fitted profile (data/boards.toml): 3 stall cycles per
    # missed 16-byte line, 2 KB direct-mapped cache. The hand code's 24 bytes are lines 0 (init and
    # the four adds) and 1 (subs, bne, movs, bx). Cold: init misses line 0; the keystream's first
    # pass hits line 0 and misses line 1, later passes hit. Warm: the cache keeps both.
    nrf = emulate.load_boards()["nrf52840"]
    assert (nrf.miss_cycles, nrf.fetch_line_bytes, nrf.cache_lines, nrf.cache_ways) == (3, 16, 128, 1)
    r = _run(nrf, "thumbv7em-none-eabihf")
    assert (r.init.cycles, r.keystream.cycles) == (M4_INIT + 3, M4_KS + 3)
    assert (r.warm_init.cycles, r.warm_keystream.cycles) == (M4_INIT, M4_KS)


def test_without_warm_the_run_is_the_cold_one_alone():
    r = emulate.Emulator(_image(), "thumbv6m-none-eabi", board=emulate.load_boards()["rp2040"]).run(N)
    assert (r.init.cycles, r.keystream.cycles) == (59, 142)
    assert r.warm_init is None and r.warm_keystream is None
