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


# --- the recorded fit of the board file -----------------------------------------------------

def _fit_rows():
    rows = list(csv.DictReader(ln for ln in open(cortexm_fit.REPO / "data" / "nano33ble-fit.csv")
                               if not ln.startswith("#")))
    assert rows
    return rows


def test_the_board_file_records_the_fit_its_per_row_table_gives():
    b = emulate.load_boards()["nano33ble"]
    f, rows = b.fit, _fit_rows()

    def med(half, asm=False):
        return round(statistics.median(abs(float(r["slope_error_pct"])) for r in rows if r["half"] == half
                                       and (not asm or r["kind"] in cortexm_fit.ASM_KINDS)), 1)
    assert f["train_median_abs_slope_error_pct"] == med("train")
    assert f["held_out_median_abs_slope_error_pct"] == med("held-out")
    assert f["held_out_asm_median_abs_slope_error_pct"] == med("held-out", True)
    assert f["train_rows"] == sum(r["half"] == "train" for r in rows)
    assert f["held_out_rows"] == sum(r["half"] == "held-out" for r in rows)
    # the halves follow the rule, not a choice made after seeing the errors
    assert {r["impl"].split("/")[0] for r in rows if r["half"] == "train"} <= set(f["train"])
    assert not {r["impl"].split("/")[0] for r in rows if r["half"] == "held-out"} & set(f["train"])
    # the profile carries the grid's best point
    assert (b.miss_cycles, b.flash_ws) == (f["best"]["miss_cycles"],) * 2
    assert (b.fetch_line_bytes, b.cache_lines, b.cache_ways) == (
        f["best"]["fetch_line_bytes"], f["best"]["cache_lines"], f["best"]["cache_ways"])


def test_the_split_recorded_is_the_rule_over_the_published_table():
    _shared()
    subs = [r.submission for r in cortexm_fit.published("nano33ble").values()]
    assert emulate.load_boards()["nano33ble"].fit["train"] == cortexm_fit.train_submissions(subs)


# one held-out asm row, one held-out C row, one training row: re-emulated with the board profile
SAMPLE = ["sparkle/schwaemm256128v2/rhys", "xoodyak/xoodyakround3/ref", "tinyjambu/tinyjambu128v2/opt"]


def test_a_re_emulated_sample_gives_the_recorded_slopes(tmp_path):
    _shared()
    _toolchain()
    want = {r["impl"]: r for r in _fit_rows()}
    for impl in SAMPLE:
        assert impl in want, impl
        out = tmp_path / impl.replace("/", "_")
        assert nistlwc.main(["--board", "nano33ble", "--impl", impl, "--cells", "slope", "--out", str(out)]) == 0
        got = next(csv.DictReader(open(out / "nist_lwc_impls.csv")))
        assert got["build"] == "ok", got["build_error"]
        assert float(got["emulated_slope_cpb"]) == pytest.approx(float(want[impl]["emulated_slope_cpb"]), abs=0.01)
        assert float(got["slope_error_pct"]) == pytest.approx(float(want[impl]["slope_error_pct"]), abs=0.06)


@pytest.mark.parametrize("old,new,msg", [
    ('fetch_line_bytes = "fitted: held out ([board.nano33ble.fit])"', 'fetch_line_bytes = "a guess"',
     "board nano33ble.fit: fetch_line_bytes is fitted: its source must say 'fitted: ...'"),
    ("cache_ways = [1, 2, 4] }", "ways = [1, 2, 4] }", "board nano33ble.fit: grid must give miss_cycles"),
    ('# photonbeetle, sparkle, xoodyak.\ntrain = ["ascon"', '# photonbeetle, sparkle, xoodyak.\ntrain = [1',
     "board nano33ble.fit: train must be a list"),
])
def test_a_bad_fit_table_is_one_error_naming_board_and_key(tmp_path, old, new, msg):
    text = emulate.BOARDS_FILE.read_text()
    assert text.count(old) == 1, old
    p = tmp_path / "boards.toml"
    p.write_text(text.replace(old, new))
    with pytest.raises(emulate.BoardError) as e:
        emulate.load_boards(p)
    assert str(p) in str(e.value) and msg in str(e.value)
