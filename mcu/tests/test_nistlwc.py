"""Tests of the NIST LWC table reproduction (mcu/nistlwc.py) and of the board profiles
(data/boards.toml) the emulator applies: published-table parsing, profile checking, fetch
wait states and cache and M4 load/store pipelining on hand-assembled loops (expected cycles
computed by hand below), and a small sample of the published tables rebuilt and emulated.

The shared NIST LWC tree ($LWCBENCH_NIST_LWC, ../shared/nist-lwc) is test data: without it the
tests that need it skip, except under CI=true or LWCBENCH_REQUIRE_SERVICES=1, where its absence
fails naming the path.
"""
from __future__ import annotations

import csv
import dataclasses
import json
import os
import shutil
import struct
import subprocess
import textwrap

import pytest

import emulate
import nistlwc

REQUIRED = os.environ.get("CI") == "true" or os.environ.get("LWCBENCH_REQUIRE_SERVICES") == "1"


def _shared():
    try:
        return nistlwc.shared_dir()
    except nistlwc.Fail as e:
        if REQUIRED:
            pytest.fail(f"NIST LWC tree required (CI / LWCBENCH_REQUIRE_SERVICES=1): {e}")
        pytest.skip(f"NIST LWC tree absent: {e}")


def _toolchain():
    if shutil.which("arm-none-eabi-gcc") is None:
        if REQUIRED:
            pytest.fail("arm-none-eabi-gcc not found (mcu/setup.sh installs it)")
        pytest.skip("arm-none-eabi-gcc not installed")


# --- published tables -------------------------------------------------------------------

TABLE = textwrap.dedent("""\
    submission,variant,primary,implementation,config,flash,enc(0:0),dec(0:0),enc(0:128),dec(0:128),enc(0:1024),dec(0:1024)
    ascon,ascon128v12,yes,ref,o2,3000,100,110,1000,1100,8168,9000
    ascon,ascon128v12,yes,broken,o2,3100,-,-,-,-,-,-
    """)


def test_parse_table_reads_cells_and_dashes():
    rows = nistlwc.parse_table(TABLE, "t.csv")
    assert [r.implementation for r in rows] == ["ref", "broken"]
    assert rows[0].cells == {(0, 0): 100, (0, 128): 1000, (0, 1024): 8168}  # dec(..) columns ignored
    assert rows[1].cells == {(0, 0): None, (0, 128): None, (0, 1024): None}
    assert nistlwc.slope(rows[0].cells) == (8168 - 1000) / 896 == 8.0
    assert nistlwc.slope(rows[1].cells) is None


HASH_TABLE = textwrap.dedent("""\
    submission,variant,primary,implementation,config,flash,h(0),h(8),h(128),h(1024),h(2048)
    ascon,asconhashv12,yes,ref,o2,3000,500,600,2000,9168,-
    """)


def test_parse_hash_table_reads_h_cells_as_messages():
    rows = nistlwc.parse_table(HASH_TABLE, "h.csv", "hash")
    assert rows[0].primitive == "hash"
    assert rows[0].cells == {(0, 0): 500, (0, 8): 600, (0, 128): 2000, (0, 1024): 9168, (0, 2048): None}
    assert nistlwc.slope(rows[0].cells) == (9168 - 2000) / 896 == 8.0
    assert nistlwc.cell_label("hash", (0, 1024)) == "h(1024)"
    with pytest.raises(nistlwc.Fail, match=r"^h.csv: line 1: no h\(x\) columns$"):
        nistlwc.parse_table(TABLE, "h.csv", "hash")


@pytest.mark.parametrize("bad,msg", [
    (TABLE.replace("8168", "8k"), "t.csv: line 2: enc(0:1024): not a number: '8k'"),
    (TABLE.replace(",3100,", ",3100,1,"), "t.csv: line 3: 13 fields, header has 12"),
    (TABLE.replace("implementation", "impl"), "t.csv: line 1: missing column 'implementation'"),
    (TABLE.replace("enc(", "e("), "t.csv: line 1: no enc(x:y) columns"),
    ("", "t.csv: empty file"),
])
def test_parse_table_errors_name_file_and_line(bad, msg):
    with pytest.raises(nistlwc.Fail) as e:
        nistlwc.parse_table(bad, "t.csv")
    assert str(e.value) == msg


def test_published_tables_parse_with_their_dash_cells():
    root = _shared()
    for board in nistlwc.BOARD_TABLE.values():
        path = root / "benchmarks" / f"{board}-aead-summary.csv"
        text = path.read_text()
        rows = nistlwc.parse_table(text, str(path))
        raw = list(csv.reader(text.splitlines()))
        dashes = sum(c.strip() == "-" for r in raw[1:] for h, c in zip(raw[0], r) if h.startswith("enc("))
        nones = sum(v is None for r in rows for v in r.cells.values())
        assert nones == dashes  # every '-' enc cell, and nothing else, is "not measured"
        assert len(rows) == len(raw) - 1
        asc = [r for r in rows if r.variant == "ascon128v12" and r.implementation == "ref" and r.config == "o2"]
        hi = nistlwc.SLOPE_HI if nistlwc.SLOPE_HI in asc[0].cells else nistlwc.SHORT_SLOPE_HI  # Due: 512 B
        assert asc and nistlwc.slope(asc[0].cells, hi) > 0


def test_implementation_folder_is_found_when_the_table_spells_the_submission_without_hyphen():
    root = _shared()
    row = nistlwc.Row("photonbeetle", "photonbeetleaead128rate32v1", "ref", "o2", None, {})
    assert nistlwc.impl_dir(root, row) == root / "implementations/photon-beetle/crypto_aead/photonbeetleaead128rate32v1/ref"
    row = nistlwc.Row("ascon", "ascon128v12", "esp32", "o2", None, {})  # not in the shared tree
    assert not nistlwc.impl_dir(root, row).exists()


# --- board profiles ---------------------------------------------------------------------

def test_board_profiles_load_with_the_shared_ids():
    boards = emulate.load_boards()
    assert {"mkrzero", "nano33ble", "nrf52840", "rp2040", "esp32c3", "due"} <= set(boards)
    for b in boards.values():
        assert b.sources.get("mhz"), b.id
    assert boards["mkrzero"].flash_ws == 1 and boards["mkrzero"].mhz == 48.0
    assert set(emulate.DEFAULT_BOARD.values()) <= set(boards)
    assert "m4_ldst_pipelining" in boards["nano33ble"].verified and boards["rp2040"].verified == ()


@pytest.mark.parametrize("edit,msg", [
    (lambda t: t.replace('triple = "thumbv6m-none-eabi"', 'triple = "thumbv8m"', 1),
     "board rp2040: triple 'thumbv8m' is not a [target.TRIPLE] of the file"),
    (lambda t: t.replace("flash_ws = 1", 'flash_ws = "one"', 1), "board mkrzero: flash_ws must be int, got 'one'"),
    (lambda t: t.replace('code_in = "flash"', 'code_in = "rom"', 1), "board nrf52840: code_in must be flash, sram or xip"),
    (lambda t: t.replace("fetch_line_bytes = 8", "fetch_line_bytes = 6", 1), "board rp2040: fetch/cache parameters"),
    (lambda t: t.replace("mhz = 48.0", "", 1), "board mkrzero: missing mhz"),
    (lambda t: t + "\n[[", "boards.toml: "),
    (lambda t: t.replace('verified = ["mhz", "flash_ws"]', 'verified = ["flash_wait"]', 1),
     "board mkrzero: verified must list parameters that have a source, got ['flash_wait']"),
])
def test_bad_board_profile_is_one_error_naming_file_board_key(tmp_path, edit, msg):
    p = tmp_path / "boards.toml"
    p.write_text(edit(emulate.BOARDS_FILE.read_text()))
    with pytest.raises(emulate.BoardError) as e:
        emulate.load_boards(p)
    assert str(p) in str(e.value) and msg in str(e.value)


# --- the profile's effect on cycles, on hand-assembled Thumb code ------------------------

ADDS_R1 = 0x3101   # adds r1, #1
SUBS_R0 = 0x3801   # subs r0, #1
BX_LR = 0x4770     # bx lr
BODY = 16          # adds per iteration


def _bne(from_hw: int, to_hw: int) -> int:
    off = (to_hw * 2 - (from_hw * 2 + 4)) // 2
    return 0xD100 | (off & 0xFF)


def _image(halfwords, syms) -> emulate.Image:
    code = struct.pack(f"<{len(halfwords)}H", *halfwords)
    return emulate.Image("hand", [(emulate.FLASH[0], code)], syms, emulate.RAM[0] + 0x100,
                         emulate.RAM[0] + emulate.RAM[1], 0, 0)


def _loop_image():
    """loop: 16 x adds r1,#1; subs r0,#1; bne loop; bx lr — 36 bytes from the flash base, so
    every pass enters the five 8-byte lines at offsets 0, 8, 16, 24, 32."""
    hw = [ADDS_R1] * BODY + [SUBS_R0]
    hw.append(_bne(len(hw), 0))
    hw.append(BX_LR)
    return _image(hw, {"loop": emulate.FLASH[0]})


def _m0_board(**kw):
    base = emulate.load_boards()["mkrzero"]
    return dataclasses.replace(base, **kw)


def _cycles(img, board, n, fn="loop", triple="thumbv6m-none-eabi", a0=None):
    emu = emulate.Emulator(img, triple, board=board)
    uc = emu.new_machine()
    ph = emu.call(uc, fn, n if a0 is None else a0, 0)
    return ph


@pytest.mark.parametrize("ws", [1, 2, 3])
def test_flash_wait_states_add_ws_per_line_fetched(ws):
    n = 100
    # M0+ TRM: adds/subs 1, bne 2 taken / 1 not taken, bx 2 -> 19 per pass, one pass falls through
    core_only = n * (BODY + 1 + 2) - 1 + 2
    img = _loop_image()
    no_ws = _cycles(img, _m0_board(flash_ws=0, miss_cycles=0, cache_lines=0), n)
    assert no_ws.cycles == core_only
    # no cache: each pass fetches its 5 lines anew (a line buffer holds only the current line)
    r = _cycles(img, _m0_board(flash_ws=ws, miss_cycles=ws, cache_lines=0), n)
    assert r.cycles == core_only + 5 * ws * n
    assert r.insns == no_ws.insns  # the profile changes cycles, never instructions
    # SAMD21-style 8 x 8-byte direct-mapped cache: the 36-byte loop fits, only the first pass misses
    r = _cycles(img, _m0_board(flash_ws=ws, miss_cycles=ws, cache_lines=8, cache_ways=1), n)
    assert r.cycles == core_only + 5 * ws
    # code in SRAM: no fetch stalls whatever the flash does
    r = _cycles(img, _m0_board(flash_ws=ws, miss_cycles=ws, code_in="sram"), n)
    assert r.cycles == core_only


def test_direct_mapped_cache_thrashes_on_a_loop_longer_than_it():
    # 8 lines x 8 B = 64 B of cache; a 72-byte loop (9 lines) evicts line 0 with line 8 each pass
    hw = [ADDS_R1] * 33 + [SUBS_R0]
    hw.append(_bne(len(hw), 0))
    hw.append(BX_LR)
    img = _image(hw, {"loop": emulate.FLASH[0]})
    n = 10
    core_only = n * (33 + 1 + 2) - 1 + 2
    r = _cycles(img, _m0_board(flash_ws=1, miss_cycles=1, cache_lines=8, cache_ways=1), n)
    # pass 1: 9 misses; later passes: line 8 (evicted by line 0) and line 0 (evicted by line 8) miss
    assert r.cycles == core_only + 9 + 2 * (n - 1)


def _m4_core():
    # An M4 board without a fetch model (the nrf52840's profile with no stalls and no cache): the
    # core's own cycles, which the TRM rules below are about.
    return dataclasses.replace(emulate.load_boards()["nrf52840"], flash_ws=0, miss_cycles=0, cache_lines=0,
                               flash_data_stall=False)


def test_m4_load_store_pipelining_saves_a_cycle_per_neighbouring_load():
    # ldr r2,[r0]; ldr r3,[r0,#4]; bx lr  (Cortex-M4 TRM 3.3.2: the second load costs 1)
    img = _image([0x6802, 0x6843, BX_LR], {"f": emulate.FLASH[0]})
    nrf = _m4_core()
    plain = _cycles(img, dataclasses.replace(nrf, m4_ldst_pipelining=False), 0, "f", "thumbv7em-none-eabihf",
                    a0=emulate.RAM[0])
    piped = _cycles(img, nrf, 0, "f", "thumbv7em-none-eabihf", a0=emulate.RAM[0])
    assert plain.cycles == 2 + 2 + (1 + emulate.M4_P)
    assert piped.cycles == 2 + 1 + (1 + emulate.M4_P)


def _m4_cycles(halfwords, board=None):
    img = _image(halfwords + [BX_LR], {"f": emulate.FLASH[0]})
    return _cycles(img, board or _m4_core(), 0, "f", "thumbv7em-none-eabihf",
                   a0=emulate.RAM[0]).cycles


BX = 1 + emulate.M4_P  # bx lr


@pytest.mark.parametrize("name,code,plain,trm", [
    # TRM 3.3.2: "Any load or store that generates an address dependent on the result of a
    # preceding data processing operation stalls the pipeline for an additional cycle"
    ("adds r0,#4; ldr r2,[r0]", [0x3004, 0x6802], 1 + 2, 1 + 2 + 1),
    # "... and the destination of the first LDR is not used to compute the address for the next
    # instruction, then one cycle is removed": here it is used, so nothing is removed
    ("ldr r1,[r0]; ldr r2,[r0,r1]", [0x6801, 0x5842], 2 + 2, 2 + 2),
    # "STR Rx,[Ry,#imm] is always one cycle"; "nothing can be pipelined after the store"
    ("str r2,[r0]; str r3,[r0,#4]", [0x6002, 0x6043], 2 + 2, 1 + 1),
    ("str r2,[r0,r1]; ldr r3,[r0,#4]", [0x5042, 0x6843], 2 + 2, 2 + 2),
    # "LDR R0,[R1,R2]; STR R0,[R3,#20] - normally three cycles total"
    ("ldr r1,[r0,r2]; str r1,[r0,#20]", [0x5881, 0x6141], 2 + 2, 3),
])
def test_m4_trm_load_store_rules(name, code, plain, trm):
    # expected cycles by hand from the quoted Cortex-M4 TRM sentences; bx lr = 1 + P
    nrf = _m4_core()
    assert _m4_cycles(code, dataclasses.replace(nrf, m4_ldst_pipelining=False)) == plain + BX, name
    assert _m4_cycles(code, nrf) == trm + BX, name


@pytest.mark.parametrize("hexcode,m4,m3", [
    ("a2fb0301", 1, 5),   # umull r0, r1, r2, r3: M4 1; M3 Table 3.1 "3 to 5" (worst case)
    ("e2fb0301", 1, 7),   # umlal r0, r1, r2, r3: M4 1; M3 "4 to 7"
    ("01fb0230", 2, 2),   # mla: 2 on both
    ("b0fbf1f0", 12, 12),  # udiv: "2 to 12" on both (worst case)
    ("0868", 2, 2),       # ldr r0, [r1]
])
def test_m3_model_differs_from_the_m4_only_in_long_multiplies(hexcode, m4, m3):
    code = bytes.fromhex(hexcode)
    for triple, want in (("thumbv7em-none-eabihf", m4), ("thumbv7m-none-eabi", m3)):
        cm = emulate.CostModel(triple)
        assert cm.cost(cm.insns(code, 0)[0]) == (want, 0), triple


# --- end to end: a small sample of the published tables ----------------------------------

# (config, implementation). Nano 33 BLE: asm hot loops (PROVENANCE.md recommends them) + the C
# reference. MKR Zero: its asm rows (ascon armv6m, bi32_armv6m) do not build with GCC 12
# ('asm' operand has impossible constraints, checked below), so C implementations only.
SAMPLE = {
    "mkrzero": [("o2", "ascon/ascon128v12/bi32"), ("o2", "ascon/ascon128v12/opt64"),
                ("o2", "ascon/ascon128v12/ref"), ("o2", "ascon/ascon128v12/armv6m")],
    "nano33ble": [("o2", "ascon/ascon128v12/armv7m"), ("o2", "ascon/ascon128v12/bi32_armv7m"),
                  ("o2", "ascon/ascon128v12/ref")],
}
# h(x) tables through the same command, one run of two implementations each (so their digests
# are cross-checked): the looped (small) asm permutations on the Nano 33 BLE, C on the MKR Zero
# (its asm does not build with GCC 12, as above)
HASH_SAMPLE = {
    "mkrzero": [("o2", "ascon/asconhashv12/bi32_low*")],
    "nano33ble": [("o2", "ascon/asconhashv12/*_small")],
}


@pytest.fixture(scope="module")
def sample_runs(tmp_path_factory):
    _shared()
    _toolchain()
    out = {}
    for prim, sample in (("aead", SAMPLE), ("hash", HASH_SAMPLE)):
        for board, impls in sample.items():
            d = tmp_path_factory.mktemp(prim + board)
            rows, runs = [], []
            for config, impl in impls:
                sub = d / (config + "_" + impl.replace("/", "_"))
                assert nistlwc.main(["--board", board, "--primitive", prim, "--config", config, "--impl", impl,
                                     "--cells", "slope", "--out", str(sub)]) == 0, impl
                rows += list(csv.DictReader(open(sub / "nist_lwc_impls.csv")))
                runs.append(json.loads((sub / "run.json").read_text()))
            out[(prim, board)] = (rows, runs)
    return out


def _median(v):
    v = sorted(v)
    return (v[len(v) // 2] + v[(len(v) - 1) // 2]) / 2

@pytest.mark.parametrize("board", list(SAMPLE))
def test_sample_slopes_within_the_target(sample_runs, board):
    rows, runs = sample_runs[("aead", board)]
    failed = {r["implementation"]: r["build_error"] for r in rows if r["build"] != "ok"}
    assert failed == ({"armv6m": "aead.c: ascon128v12/armv6m/round.h:9:3: error: 'asm' operand has impossible "
                                 "constraints"} if board == "mkrzero" else {})
    rows = [r for r in rows if r["build"] == "ok"]
    assert all(r["board_profile"] == board for r in rows)
    errs = {r["variant"] + "/" + r["implementation"]: float(r["slope_error_pct"]) for r in rows}
    asm = [abs(v) for r in rows if r["kind"] in ("asm", "inline-asm") for v in [float(r["slope_error_pct"])]]
    if board == "nano33ble":
        assert len(asm) == 2 and _median(asm) <= 5.0, errs  # the target for asm hot loops
    assert _median([abs(v) for v in errs.values()]) <= 10.0, errs  # and over all that build
    for rec, (config, _) in zip(runs, SAMPLE[board]):
        assert rec["board_profile"]["id"] == board and rec["compiler"].startswith("arm-none-eabi-gcc")
        assert nistlwc.CONFIGS[config] in rec["cflags"]


@pytest.mark.parametrize("board", list(HASH_SAMPLE))
def test_hash_sample_slopes_within_the_target(sample_runs, board):
    rows, runs = sample_runs[("hash", board)]
    assert [r["build"] for r in rows] == ["ok", "ok"], rows
    errs = {r["implementation"]: float(r["slope_error_pct"]) for r in rows}
    # Nano 33 BLE: its fetch profile is fitted on the AEAD table only; on the hash table (held out
    # as a whole) this pair gives +1.6 % / +8.9 % (mcu/README.md, "Nano 33 BLE"): within the 10 %
    # target over all, not the 5 % of the asm target
    assert _median([abs(v) for v in errs.values()]) <= (10.0 if board == "nano33ble" else 5.0), errs
    assert all(r["ct_check"] == "agrees" for r in rows), rows  # same digests from both implementations
    for rec in runs:
        assert rec["primitive"] == "hash" and rec["published_table"] == f"{board}-hash-summary.csv"


def test_due_table_in_microseconds_is_compared_in_cycles(tmp_path):
    # The Due was timed with micros(): published cells are microseconds, compared at 84 MHz, and
    # its longest message is 512 bytes, so the slope runs from enc(0:128) to enc(0:512).
    root = _shared()
    _toolchain()
    text = (root / "benchmarks" / "dueUSB-aead-summary.csv").read_text().splitlines()
    hdr = text[0].split(",")
    row = next(ln.split(",") for ln in text if ln.startswith("ascon,ascon128v12,yes,armv7m,o2,"))
    us128, us512 = int(row[hdr.index("enc(0:128)")]), int(row[hdr.index("enc(0:512)")])
    assert nistlwc.main(["--board", "due", "--impl", "ascon/ascon128v12/armv7m", "--cells", "slope",
                         "--out", str(tmp_path)]) == 0
    r = next(csv.DictReader(open(tmp_path / "nist_lwc_impls.csv")))
    assert r["build"] == "ok" and r["kind"] == "inline-asm" and r["total_cell"] == "enc(0:512)"
    assert float(r["published_slope_cpb"]) == round((us512 - us128) * 84 / 384, 2)
    assert int(r["published_total"]) == us512 * 84
    rec = json.loads((tmp_path / "run.json").read_text())
    assert rec["board_profile"]["core"] == "m3" and "-mcpu=cortex-m3" in rec["cflags"]
    assert rec["published_unit"].startswith("us") and rec["slope_cells"] == ["enc(0:128)", "enc(0:512)"]


def test_bad_options_are_one_error_line(capsys, tmp_path):
    assert nistlwc.main(["--board", "uno", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: --board: 'uno'") and err.count("\n") == 1
    assert nistlwc.main(["--board", "mkrzero", "--config", "o4", "--out", str(tmp_path)]) == 2
    assert capsys.readouterr().err.startswith("error: --config: 'o4'")
    assert nistlwc.main(["--board", "mkrzero", "--primitive", "xof", "--out", str(tmp_path)]) == 2
    assert capsys.readouterr().err == "error: --primitive: 'xof' (expected aead or hash)\n"
    assert not list(tmp_path.iterdir())  # nothing written


# --- classification by what was built, and failed rows (issue #39 item 3) ------------------

# GCC's assembler output for `f` with an asm statement and `g` whose asm is guarded out for
# x86 (arm-none-eabi-gcc 12.2 -Os -S, trimmed): only `f` holds emitted inline assembly.
GCC_S = """\
\t.type\tf, %function
f:
\t@ args = 0, pretend = 0, frame = 0
\t.syntax unified
@ 1 "ia.c" 1
\tadds r0, r0, #1
1:
\tnop
@ 0 "" 2
\t.thumb
\tbx\tlr
\t.type\tg, %function
g:
\tadds\tr0, r0, #1
\tbx\tlr
"""


def test_inline_asm_is_counted_where_the_compiler_emitted_it():
    # two instructions between the markers ("1:" is a label), none in g
    assert nistlwc.inline_asm_functions(GCC_S) == {"f": 2}
    assert nistlwc.impl_kind(None, 0, 0) == "c" and nistlwc.impl_kind(None, 0, 2) == "inline-asm"
    assert nistlwc.impl_kind(None, 128, 0) == "asm"


def test_inline_asm_guarded_for_another_architecture_emits_nothing(tmp_path):
    _toolchain()
    src = tmp_path / "ia.c"
    src.write_text('int f(int x){int y; __asm__ volatile("adds %0, %1, #1" : "=r"(y) : "r"(x)); return y;}\n'
                   'int g(int x){\n#if defined(__x86_64__)\n__asm__("nop");\n#endif\nreturn x + 1;}\n')
    out = tmp_path / "ia.s"
    subprocess.run(["arm-none-eabi-gcc", "-mcpu=cortex-m4", "-mthumb", "-Os", "-S", str(src), "-o", str(out)],
                   check=True)
    assert nistlwc.inline_asm_functions(out.read_text()) == {"f": 1}


def test_kind_follows_the_cycles():
    img = _image([], {"asm_round": 0x101, "inl": 0x201, "c_loop": 0x301})
    origin = nistlwc.Origin(asm={"asm_round"}, inline={"inl": 3})
    # 60 of 100 cycles in the .S function: asm, share 0.6 (by hand)
    prof = {0x100: (4, 60, 8), 0x300: (1, 40, 8)}
    assert nistlwc.classify_by_cycles(origin, prof, img, "asm") == ("asm", 0.6)
    # a build with assembly whose cycles run in C: c
    prof = {0x110: (1, 10, 8), 0x300: (9, 90, 8)}
    assert nistlwc.classify_by_cycles(origin, prof, img, "asm") == ("c", 0.1)
    prof = {0x204: (1, 30, 8), 0x100: (1, 25, 8), 0x300: (1, 45, 8)}
    assert nistlwc.classify_by_cycles(origin, prof, img, "c") == ("inline-asm", 0.55)
    # no profile (the image did not run): the kind by what was built
    assert nistlwc.classify_by_cycles(origin, None, img, "inline-asm") == ("inline-asm", None)


def _cell(ad, msg, rc=0, digest="aa", error=""):
    return nistlwc.Cell(ad, msg, None if error else 100, None if error else 50, 0, rc, digest, error)


def test_a_crash_a_nonzero_return_or_a_wrong_ciphertext_fails_the_row():
    good = {(0, 128): _cell(0, 128), (0, 1024): _cell(0, 1024, digest="bb")}
    ref = {(0, 128): "aa", (0, 1024): "bb"}
    assert nistlwc.emulation_failure(good, ref) == ""
    crashed = {**good, (0, 1024): _cell(0, 1024, rc=None, digest="",
                                        error="emulation: Unhandled CPU exception (UC_ERR_EXCEPTION)")}
    assert nistlwc.emulation_failure(crashed, ref) == \
        "crashed in emulation at ad=0 msg=1024: Unhandled CPU exception (UC_ERR_EXCEPTION)"
    assert nistlwc.emulation_failure({**good, (0, 128): _cell(0, 128, rc=-1)}, ref) == \
        "crypto_aead_encrypt returned -1 at ad=0 msg=128"
    wrong = {**good, (0, 1024): _cell(0, 1024, digest="cc")}
    assert nistlwc.emulation_failure(wrong, ref) == \
        "ciphertext differs from the host-built reference implementation at 1 of 2 cells (first: ad=0 msg=1024)"
    assert nistlwc.emulation_failure(wrong, {}) == ""  # no reference: the cross-check column speaks


def test_kat_entries_with_the_harness_inputs_are_read():
    kat = ("Count = 1\nKey = 000102030405060708090A0B0C0D0E0F\nNonce = 000102030405060708090A0B0C0D0E0F\n"
           "PT = \nAD = \nCT = 1866911F9E436083F788BBF27C62180A\n\n"
           "Count = 2\nKey = 000102030405060708090A0B0C0D0E0F\nNonce = 000102030405060708090A0B0C0D0E0F\n"
           "PT = 0001\nAD = 00\nCT = ABCD\n\n"
           "Count = 3\nKey = FF0102030405060708090A0B0C0D0E0F\nNonce = 000102030405060708090A0B0C0D0E0F\n"
           "PT = \nAD = \nCT = 00\n")
    assert nistlwc.parse_kat(kat) == [(0, 0, "1866911f9e436083f788bbf27c62180a"), (1, 2, "abcd")]


def test_a_crashing_image_is_a_failed_row_and_assembly_means_assembly(tmp_path):
    # romulusm/arm_inline_asm jumps to no code on the M4 model (reported "ok" before); rhys spends
    # its cycles in .S code; ref is C whose output the host-built ref and the variant's KAT confirm.
    _shared()
    _toolchain()
    assert nistlwc.main(["--board", "nano33ble", "--impl", "*romulusm/[ar]*", "--cells", "slope",
                         "--out", str(tmp_path)]) == 0
    rows = {r["implementation"]: r for r in csv.DictReader(open(tmp_path / "nist_lwc_impls.csv"))}
    assert rows["arm_inline_asm"]["build"] == "failed"
    assert rows["arm_inline_asm"]["build_error"].startswith("crashed in emulation at ad=0 msg=")
    assert rows["rhys"]["kind"] == "asm" and float(rows["rhys"]["asm_cycle_share_pct"]) > 50
    assert rows["ref"]["kind"] == "c" and rows["ref"]["build"] == "ok"
    assert "passes LWC_AEAD_KAT_128_128.txt" in rows["ref"]["reference_check"]
    md = (tmp_path / "nist_lwc.md").read_text()
    assert "* romulus/romulusm/arm_inline_asm: crashed in emulation" in md


def test_an_image_that_misses_the_official_vector_is_a_failed_row(tmp_path):
    # On the MKR Zero the two XKCP builds of Xoodyak give ciphertexts other than the official
    # LWC_AEAD_KAT entry 32:32 (the files's own bytes); ref reproduces it.
    _shared()
    _toolchain()
    assert nistlwc.main(["--board", "mkrzero", "--impl", "*xoodyakround3*", "--cells", "slope",
                         "--out", str(tmp_path)]) == 0
    rows = {r["implementation"]: r for r in csv.DictReader(open(tmp_path / "nist_lwc_impls.csv"))}
    for impl in ("XKCP-ARMv6M", "XKCP-plain-ua"):
        assert rows[impl]["build"] == "failed"
        assert rows[impl]["build_error"] == ("ciphertext differs from the official LWC_AEAD_KAT_128_128.txt entry "
                                             "at 1 of 1 cells (first: ad=32 msg=32)")
    assert rows["ref"]["build"] == "ok"
    assert rows["ref"]["reference_check"].endswith("the image reproduces LWC_AEAD_KAT_128_128.txt at ad=msg=32")


def test_a_kat_file_is_parsed_once_per_run(tmp_path, monkeypatch):
    # kat_reference (the image's own entry) and host_reference (the ref's check) read the same
    # variant file; it was parsed again for every implementation of the variant.
    kat = tmp_path / "LWC_AEAD_KAT_128_128.txt"
    kat.write_text("Count = 1\nKey = 00\nNonce = 00\nPT = \nAD = \nCT = 1866\n\n")
    calls = []
    real = nistlwc.parse_kat
    monkeypatch.setattr(nistlwc, "parse_kat", lambda text: calls.append(1) or real(text))
    monkeypatch.setattr(nistlwc, "_KAT_ENTRIES", {})
    first = nistlwc.kat_entries(kat)
    first.append("caller's own list")
    assert nistlwc.kat_entries(kat) == [(0, 0, "1866")]
    assert len(calls) == 1


def test_o2_builds_as_the_published_tables_compilers_did(tmp_path):
    # GCC 12's -O2 vectorizes and the tables' older compilers' did not: built with it, sparkle's
    # C `opt` ran 34.6 % faster than the Nano 33 BLE; without it, within 4 %. The expected slope is
    # the published table's own: (enc(0:1024) - enc(0:128)) / 896 from the shared CSV.
    root = _shared()
    _toolchain()
    text = (root / "benchmarks" / "nano33ble-aead-summary.csv").read_text().splitlines()
    hdr = text[0].split(",")
    row = next(ln.split(",") for ln in text if ln.startswith("sparkle,schwaemm128128v2,") and ",opt,o2," in ln)
    pub = (int(row[hdr.index("enc(0:1024)")]) - int(row[hdr.index("enc(0:128)")])) / 896
    assert nistlwc.main(["--board", "nano33ble", "--impl", "sparkle/schwaemm128128v2/opt", "--cells", "slope",
                         "--out", str(tmp_path)]) == 0
    r = next(csv.DictReader(open(tmp_path / "nist_lwc_impls.csv")))
    assert r["build"] == "ok" and r["kind"] == "c"
    assert float(r["published_slope_cpb"]) == round(pub, 2)
    assert abs(float(r["emulated_slope_cpb"]) - pub) / pub <= 0.05, (r["emulated_slope_cpb"], pub)
    rec = json.loads((tmp_path / "run.json").read_text())
    assert "-O2" in rec["cflags"] and "-fno-tree-vectorize" in rec["cflags"]
