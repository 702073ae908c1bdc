"""data/boards.toml, the one record per board and target, and mcu/boardfile.py, its one Python
loader: values checked by hand against the file, and the add-a-board dry run of CONTRIBUTING.md
(a record appended to a copy; every Python table derived from the file follows)."""
from __future__ import annotations

import json
import pathlib
import subprocess
import sys

import pytest

import boardfile

REPO = pathlib.Path(__file__).resolve().parents[2]
FAKE = '''
[board.stm32f4disco]
name = "STM32F4 Discovery"
chip = "STM32F407VG"
triple = "thumbv7em-none-eabihf"
mhz = 168.0
code_in = "flash"
flash_ws = 5
fetch_line_bytes = 16
cache_lines = 64
cache_ways = 1
m4_ldst_pipelining = true
verified = []
[board.stm32f4disco.sources]
mhz = "dry run: not a sourced record"
[board.stm32f4disco.power]
volts = 3.0
active_ma = 40.0
sleep_ua = 2.0
status = "estimate"
source = "dry run: not a sourced record"

[target.xtensa-esp32-elf]
core = "Xtensa LX6"
emulable = false
[target.xtensa-esp32-elf.cpp]
cxx = "xtensa-esp32-elf-g++"
cc = "xtensa-esp32-elf-gcc"
arch_flags = ["-mlongcalls"]
libc_flags = []
libs = ["-lgcc"]
'''


def test_values_by_hand_from_the_file():
    targets, boards = boardfile.load()
    assert list(boards) == ["rp2040", "nrf52840", "esp32c3", "mkrzero", "nano33ble", "due", "esp8266"]
    p = boards["rp2040"].power
    assert (p.volts, p.active_ma, p.sleep_ua, p.status) == (5.0, 25.0, 2000.0, "estimate")
    assert boards["mkrzero"].core == "m0plus" and boards["mkrzero"].chip == "ATSAMD21G18A"
    assert boards["due"].power is None and boards["due"].core == "m3"
    assert boards["rp2040"].miss_cycles == 56 and boards["mkrzero"].miss_cycles == 1  # given; defaults to flash_ws
    t = targets["thumbv6m-none-eabi"]
    assert (t.core, t.model, t.board, t.rust, t.emulable) == ("Cortex-M0+", "m0plus", "rp2040", True, True)
    assert t.cpp.arch_flags == ("-mcpu=cortex-m0plus", "-mthumb") and t.cpp.libs == ("-lc", "-lgcc")
    x = targets["xtensa-lx106-elf"]
    assert (x.core, x.model, x.board, x.rust, x.emulable) == ("Xtensa LX106", "lx106", "esp8266", False, False)
    assert x.cpp.libc_flags == ("-ffreestanding",)
    assert targets["thumbv7em-none-eabihf"].cpp is None


def test_the_tables_keyed_by_triple_come_from_the_file():
    import build
    import emulate
    import run

    assert build.RUST_TARGETS == ["thumbv6m-none-eabi", "riscv32imc-unknown-none-elf", "thumbv7em-none-eabihf"]
    assert [c.name for c in build.CPP_TARGETS] == ["thumbv6m-none-eabi", "riscv32imc-unknown-none-elf",
                                                  "xtensa-lx106-elf"]
    assert [c.emulable for c in build.CPP_TARGETS] == [True, True, False]
    assert emulate.DEFAULT_BOARD == {"thumbv6m-none-eabi": "rp2040", "thumbv7em-none-eabihf": "nrf52840",
                                     "riscv32imc-unknown-none-elf": "esp32c3", "xtensa-lx106-elf": "esp8266"}
    assert emulate.TARGETS["thumbv6m-none-eabi"] == emulate.Target(
        "thumbv6m-none-eabi", "Cortex-M0+", "m0plus", 125.0, "RP2040 @125 MHz, board profile rp2040")
    assert emulate.TARGETS["thumbv7m-none-eabi"].mhz == 84.0 and "xtensa-lx106-elf" not in emulate.TARGETS
    assert run.CORE["riscv32imc-unknown-none-elf"] == "RV32IMC" and run.CORE["xtensa-lx106-elf"] == "Xtensa LX106"


def test_the_esp8266_record_by_hand():
    # One record for the ESP8266: clock, where code runs, the LX106 model with each parameter's
    # source and the fitted ones marked, the held-out split and residuals, power with its source
    # (values read from data/boards.toml by hand).
    b = boardfile.load_boards()["esp8266"]
    assert (b.chip, b.triple, b.core, b.mhz, b.code_in, b.cache_lines) == (
        "ESP8266EX", "xtensa-lx106-elf", "lx106", 80.0, "xip", 0)
    assert not b.fetch_stalls(), "the LX106 model is warm only: no flash-cache misses are charged"
    lx = b.lx106
    assert lx.table == "nodemcuv2" and lx.cflags == ("-mlongcalls", "-mtext-section-literals", "-falign-functions=4")
    assert lx.timing == {"base": 1, "load_use": 1, "mul_use": 1, "rsr_use": 1, "taken_branch": 3, "jump": 2,
                         "l32r_flash": 4, "flash_fetch_hit": 0}
    assert lx.fitted() == ["taken_branch", "jump", "l32r_flash"]
    assert "xtensa.md" in lx.sources["load_use"] and lx.sources["flash_fetch_hit"].startswith("estimate")
    assert lx.fit["train"] == ["ascon", "giftcofb", "isap", "romulus", "tinyjambu"]
    assert (lx.fit["train_rows"], lx.fit["train_median_abs_slope_error_pct"], lx.fit["held_out_rows"],
            lx.fit["held_out_median_abs_slope_error_pct"]) == (69, 2.1, 42, 3.6)
    p = b.power
    assert (p.volts, p.active_ma, p.sleep_ua, p.status) == (3.3, 15.0, 20.0, "sourced")
    assert "Table 3-4" in p.source
    assert boardfile.lx106_board("nodemcuv2") == b == boardfile.lx106_board("esp8266")
    assert all(o.lx106 is None for o in boardfile.load_boards().values() if o.id != "esp8266")


LX_BLOCK = ("[board.esp8266.lx106]", "[board.esp8266.power]")


@pytest.mark.parametrize("edit,msg", [
    (lambda t: t.replace('\njump = "fitted', '\nx_jump = "fitted', 1),
     "board esp8266.lx106: jump has no source in the board's sources table"),
    (lambda t: t.replace("taken_branch = 3\n", "taken_branch = 101\n", 1),
     "board esp8266.lx106: taken_branch must be an integer 0..100, got 101"),
    (lambda t: t.replace("taken_branch = 3\n", "taken_branch = true\n", 1),
     "board esp8266.lx106: taken_branch must be an integer 0..100, got True"),
    (lambda t: t.replace('cflags = ["-mlongcalls"', 'cflags = ["-o/tmp/x", "-mlongcalls"', 1),
     "board esp8266.lx106: cflags must be a list of -m/-f options"),
    (lambda t: t.replace("[board.esp8266.lx106]\n", "[board.esp8266.lx106]\nbogus = 1\n", 1),
     "board esp8266.lx106: unknown key 'bogus'"),
    (lambda t: t.replace("grid = { taken_branch = [0,", "grid = { base_x = [0,", 1),
     "board esp8266.lx106.fit: grid base_x: a timing parameter"),
    (lambda t: t[:t.index(LX_BLOCK[0])] + t[t.index(LX_BLOCK[1]):],
     "board esp8266: a board of an lx106 target needs an [lx106] table, and only such a board"),
    (lambda t: t.replace('model = "lx106"', 'model = "m3"', 1),
     "board esp8266: a board of an lx106 target needs an [lx106] table, and only such a board"),
    (lambda t: t.replace('model = "lx106"', 'model = "lx107"', 1),
     "target xtensa-lx106-elf: model must be one of m0plus, m3, m4, rv32, lx106, got 'lx107'"),
])
def test_a_bad_lx106_record_is_one_error_naming_board_and_key(tmp_path, edit, msg):
    good = (REPO / "data" / "boards.toml").read_text()
    bad = tmp_path / "boards.toml"
    text = edit(good)
    assert text != good
    bad.write_text(text)
    with pytest.raises(boardfile.BoardError) as e:
        boardfile.load(bad)
    assert str(e.value).startswith(f"{bad}: ") and msg in str(e.value) and "\n" not in str(e.value), str(e.value)


DERIVED = """
import json, pathlib, sys
sys.path.insert(0, sys.argv[2])
import boardfile
boardfile.BOARDS_FILE = pathlib.Path(sys.argv[1])
import build, emulate, run
sys.path.insert(0, sys.argv[3])
import importlib.util
spec = importlib.util.spec_from_file_location("ec", sys.argv[3] + "/emulated-cycles.py")
ec = importlib.util.module_from_spec(spec); spec.loader.exec_module(ec)
print(json.dumps({"rust": build.RUST_TARGETS, "cpp": [c.name for c in build.CPP_TARGETS],
                  "targets": sorted(emulate.TARGETS), "default": emulate.DEFAULT_BOARD, "core": run.CORE,
                  "boards": sorted(emulate.load_boards()), "power": [b.id for b in ec.read_boards()]}))
"""


def test_adding_a_board_is_one_record(tmp_path):
    # CONTRIBUTING.md, "Adding a board": the record alone changes every Python table of boards and
    # targets (the Rust side has its own dry run: crates/data, adding_a_board_is_one_record).
    toml = tmp_path / "boards.toml"
    toml.write_text((REPO / "data" / "boards.toml").read_text() + FAKE)
    r = subprocess.run([sys.executable, "-c", DERIVED, str(toml), str(REPO / "mcu"), str(REPO / "scripts" / "data")],
                       capture_output=True, text=True, check=True)
    got = json.loads(r.stdout)
    assert got["power"] == ["rp2040", "nrf52840", "esp32c3", "mkrzero", "nano33ble", "esp8266", "stm32f4disco"]
    assert "stm32f4disco" in got["boards"]
    assert got["cpp"][-1] == "xtensa-esp32-elf" and got["core"]["xtensa-esp32-elf"] == "Xtensa LX6"
    assert "xtensa-esp32-elf" not in got["targets"] and "xtensa-esp32-elf" not in got["rust"]
    # The unchanged part of the file gives the real tables.
    assert got["rust"] == ["thumbv6m-none-eabi", "riscv32imc-unknown-none-elf", "thumbv7em-none-eabihf"]


@pytest.mark.parametrize("edit,msg", [
    (lambda t: t.replace('board = "rp2040"', 'board = "mkrzero2"', 1),
     "target thumbv6m-none-eabi: board 'mkrzero2' is not a board of this target"),
    (lambda t: t.replace('board = "rp2040"', 'board = "nrf52840"', 1),
     "target thumbv6m-none-eabi: board 'nrf52840' is not a board of this target"),
    (lambda t: t.replace('model = "m0plus"', 'model = "avr"', 1), "target thumbv6m-none-eabi: model must be one of"),
    (lambda t: t.replace('status = "estimate"', 'status = "guess"', 1), "board rp2040.power: status must be"),
    (lambda t: t.replace("volts = 5.0", "volts = 0.0", 1), "board rp2040.power: volts must be a positive number"),
    (lambda t: t.replace('libs = ["-lc", "-lgcc"]', 'libs = "-lc"', 1),
     "target thumbv6m-none-eabi.cpp: libs must be a list of strings"),
    (lambda t: t.replace("[target.thumbv6m-none-eabi]\n", "[target.thumbv6m-none-eabi]\nspeed = 1\n", 1),
     "target thumbv6m-none-eabi: unknown key 'speed'"),
])
def test_a_bad_record_is_one_error_naming_file_record_key(tmp_path, edit, msg):
    p = tmp_path / "boards.toml"
    p.write_text(edit(boardfile.BOARDS_FILE.read_text()))
    with pytest.raises(boardfile.BoardError) as e:
        boardfile.load(p)
    assert str(p) in str(e.value) and msg in str(e.value), str(e.value)
