"""data/emulated-cycles.csv cannot drift from the emulator: a sample of images is built and
emulated again on every board (scripts/data/emulated-cycles.py's own code, each board's profile) and must
give the committed rows exactly, cold and warm.
Run with the mcu environment: CARGO_TARGET_DIR=target/mcu .venv/bin/python -m pytest -q tests/energy
"""
from __future__ import annotations

import csv
import importlib.util
import json
import pathlib
import sys

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "mcu"))

_spec = importlib.util.spec_from_file_location("emulated_cycles", REPO / "scripts" / "data" / "emulated-cycles.py")
ec = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(ec)

TABLE = REPO / "data" / "emulated-cycles.csv"
# One stream cipher, one AEAD, one block cipher, DRACO: on every target.
SAMPLE = ("trivium", "rc_ascon_aead128", "rc_speck64_128", "draco_fast")


def committed(table=TABLE, columns=ec.COLUMNS, key=lambda r: (r[0], r[3], r[4])) -> dict:
    """Rows of a generated table by `key` (here board, image, target); its header must be `columns`."""
    with open(table, newline="") as f:
        rows = list(csv.reader(line for line in f if not line.startswith("#")))
    assert rows[0] == columns
    return {key(r): r for r in rows[1:]}


def manifest_covers(table: dict) -> None:
    """Every image of mcu/images.json has a row per Rust target, and no other row exists."""
    import build  # noqa: E402

    manifest = json.loads((REPO / "mcu" / "images.json").read_text())
    want = {(m["image"], t) for m in manifest for t in build.RUST_TARGETS}
    assert want == set(table), f"missing {sorted(want - set(table))}, extra {sorted(set(table) - want)}"


def test_every_board_has_a_row_per_image_of_its_target():
    # A new image (mcu/images.json, mcu/lx106_images.py) or a new board (data/boards.toml)
    # without regenerated cycles fails here. An LX106 board (the ESP8266) has the C/C++ images
    # of the LX106 route, every other board the Rust images of its target.
    import lx106_images  # noqa: E402

    table = committed()
    manifest = json.loads((REPO / "mcu" / "images.json").read_text())
    want = {(b.id, m["image"], b.triple) for b in ec.read_boards() if b.lx106 is None for m in manifest}
    want |= {(b.id, i.image, b.triple) for b in ec.read_boards() if b.lx106 is not None for i in lx106_images.IMAGES}
    assert any(k[0] == "esp8266" for k in want)
    assert want == set(table), f"missing {sorted(want - set(table))}, extra {sorted(set(table) - want)}"


# One own C++ stream cipher and one NIST LWC C AEAD on the ESP8266.
LX106_SAMPLE = ("draco_fast", "nist_ascon128v12_bi32_lowsize")


def test_lx106_sample_re_emulated_equals_the_committed_table():
    # The ESP8266 rows come from QEMU's lx106 CPU and the LX106 model (mcu/lx106_images.py): a
    # sample built and emulated again gives the committed rows, cold = warm.
    import lx106  # noqa: E402
    import lx106_images  # noqa: E402

    try:
        lx106.check_tools()
    except lx106.Lx106Error as e:
        pytest.skip(str(e))
    imgs = [i for i in lx106_images.IMAGES if i.image in LX106_SAMPLE]
    if imgs[1] not in lx106_images.available(imgs)[0]:
        pytest.skip("NIST LWC tree absent")
    boards = [b for b in ec.read_boards() if b.lx106 is not None]
    fresh = {(r[0], r[3], r[4]): r for r in ec.lx106_rows(boards, images=imgs)}
    assert len(fresh) == len(LX106_SAMPLE) * len(boards)
    table = committed()
    for key, row in fresh.items():
        assert table[key] == row, f"{key}: committed {table[key]} != emulated {row}; regenerate (scripts/data/emulated-cycles.py --board {key[0]})"
        assert row[9:12] == row[12:15], "cold = warm: no flash-cache model is sourced"


def test_sample_re_emulated_equals_the_committed_table():
    import build  # noqa: E402
    import run  # noqa: E402

    build.build_rust(("Os",))
    imgs = [im for im in run.images(("Os",)) if im.language == "Rust" and im.image in SAMPLE]
    assert len(imgs) == len(SAMPLE) * len(build.RUST_TARGETS)
    boards = [b for b in ec.read_boards() if b.lx106 is None]  # the ESP8266 has no Rust image
    fresh = {(r[0], r[3], r[4]): r for r in ec.emulate_rows(imgs, boards)}
    assert len(fresh) == len(SAMPLE) * len(boards)
    table = committed()
    for key, row in fresh.items():
        assert table[key] == row, f"{key}: committed {table[key]} != emulated {row}; regenerate (scripts/data/emulated-cycles.py)"


def test_boards_of_one_core_get_their_own_profiles_counts():
    # The MKR Zero (SAMD21: one flash wait state per 8-byte line, 8-line cache) and the Pico
    # (RP2040: 56-cycle XIP misses, 16 KB cache) run the same M0+ image: same instructions,
    # other cycles. Before the table had a board column both read the rp2040-profiled row.
    table = committed()
    mkr = table[("mkrzero", "draco_fast", "thumbv6m-none-eabi")]
    pico = table[("rp2040", "draco_fast", "thumbv6m-none-eabi")]
    assert mkr[9:] != pico[9:]


def test_one_chip_with_one_fetch_profile_gets_equal_counts():
    # The Nano 33 BLE and the generic nRF52840 board: same chip, same clock and the same fitted
    # fetch profile (data/boards.toml), so each image's row is the same but for the board column,
    # here and in data/nistlwc-cycles.csv. Before the nrf52840 took the Nano's fetch parameters
    # it had no wait states and no cache: fewer cycles, cold = warm.
    boards = {b.id: b for b in ec.read_boards()}
    fetch = ("mhz", "code_in", "flash_ws", "miss_cycles", "fetch_line_bytes", "cache_lines", "cache_ways",
             "m4_ldst_pipelining", "flash_data_stall")
    assert [getattr(boards["nrf52840"], k) for k in fetch] == [getattr(boards["nano33ble"], k) for k in fetch]
    table = committed()
    rows = {b: {k[1:]: r[1:] for k, r in table.items() if k[0] == b} for b in ("nrf52840", "nano33ble")}
    assert rows["nrf52840"] and rows["nrf52840"] == rows["nano33ble"]
    nist = committed(REPO / "data" / "nistlwc-cycles.csv", NISTLWC_COLUMNS, key=lambda r: (r[0], r[3]))
    rows = {b: {k[1]: r[1:] for k, r in nist.items() if k[0] == b} for b in ("nrf52840", "nano33ble")}
    assert rows["nrf52840"] and rows["nrf52840"] == rows["nano33ble"]


# data/nistlwc-cycles.csv's header (scripts/data/nistlwc-cycles.py)
NISTLWC_COLUMNS = ["board", "cipher", "implementation", "nist_implementation", "kind", "config", "target",
                   "timing_model", "ad_bytes", "cold_cycles_16_bytes", "cold_cycles_128_bytes",
                   "warm_cycles_16_bytes", "warm_cycles_128_bytes", "flash_bytes", "ram_static_bytes",
                   "stack_bytes", "check"]


def test_warm_and_cold_by_the_boards_cache():
    # Columns by name, read from the file here (not by the script). Warm (the steady state of a
    # loop) never costs more than the cold first call; a board that fetches without stalls or
    # has no instruction cache keeps nothing between two messages, so there they are equal.
    with open(TABLE, newline="") as f:
        rows = list(csv.DictReader(line for line in f if not line.startswith("#")))
    boards = {b.id: b for b in ec.read_boards()}
    kinds = ("init_cycles", "cycles_128_bits", "cycles_1024_bits")
    for r in rows:
        cold = [int(r[f"cold_{k}"]) for k in kinds]
        warm = [int(r[f"warm_{k}"]) for k in kinds]
        # the LX106 AEADs use the NIST LWC API, which has no init of its own (it keys every
        # encrypt call): init 0 there
        nist_api = r["timing_model"] == "lx106" and r["phase"] == "encrypt"
        assert all((nist_api and i == 0 or 0 < w) and w <= c for i, (w, c) in enumerate(zip(warm, cold))), r
        b = boards[r["board"]]
        if not b.fetch_stalls() or b.cache_lines == 0:
            assert warm == cold, r
    # The Pico's XIP cache (56 cycles per missed 8-byte line) holds all of AES-128's code: warm is
    # far below cold (issue #38: 22,791 cycles cold for 16 bytes).
    aes = next(r for r in rows if (r["board"], r["image"]) == ("rp2040", "rc_aes128"))
    assert int(aes["cold_cycles_128_bits"]) == 22791 and int(aes["warm_cycles_128_bits"]) < 22791 // 2


def test_a_bad_board_record_is_one_error_line(tmp_path, capsys):
    good = (REPO / "data" / "boards.toml").read_text()
    bad = tmp_path / "boards.toml"
    out = tmp_path / "t.csv"
    for edit, msg in [
        (good.replace('triple = "thumbv6m-none-eabi"', 'triple = "avr"', 1),
         "board rp2040: triple 'avr' is not a [target.TRIPLE] of the file"),
        (good.replace("active_ma = 25.0", "active_ma = -1.0", 1), "board rp2040.power: active_ma must be a positive number"),
        (good.replace("[board.rp2040.power]", "[board.rp2040.pwoer]", 1), "board rp2040: unknown key 'pwoer'"),
        (good.replace("[board.rp2040.power]", "[x]").replace("[board.nrf52840.power]", "[y]")
         .replace("[board.esp32c3.power]", "[z]").replace("[board.mkrzero.power]", "[v]")
         .replace("[board.nano33ble.power]", "[w]").replace("[board.esp8266.power]", "[u]"),
         "no board has a [board.ID.power] table"),
    ]:
        bad.write_text(edit)
        assert ec.main(["--no-build", "--boards", str(bad), "--out", str(out)]) == 1
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith(f"error: {bad}") and msg in err[0], err
        assert not out.exists()


def test_only_re_emulates_the_named_images_and_keeps_every_other_row(tmp_path, capsys):
    """`--only IMAGE` on a copy of the committed table: that image's rows are emulated again
    (they equal the committed ones), a hand-changed row of another image stays as it is, a
    dropped row of the named image comes back, and the row order is the full run's."""
    text = TABLE.read_text()
    out = tmp_path / "t.csv"
    # another image's row with a number no emulator gives; the named image loses its rp2040 row
    other = next(ln for ln in text.splitlines() if ln.startswith("rp2040,Trivium,"))
    mine = next(ln for ln in text.splitlines() if ln.startswith("rp2040,XTEA,"))
    out.write_text(text.replace(other, other.rsplit(",", 1)[0] + ",1").replace(mine + "\n", ""))
    assert ec.main(["--no-build", "--only", "rc_xtea", "--out", str(out)]) == 0
    assert out.read_text() == text.replace(other, other.rsplit(",", 1)[0] + ",1")
    assert ec.main(["--no-build", "--only", "no_such_image", "--out", str(out)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1] == "error: --only: no Rust image named no_such_image"
