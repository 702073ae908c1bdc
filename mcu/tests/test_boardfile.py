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
    assert list(boards) == ["rp2040", "nrf52840", "esp32c3", "mkrzero", "nano33ble", "due"]
    p = boards["rp2040"].power
    assert (p.volts, p.active_ma, p.sleep_ua, p.status) == (5.0, 25.0, 2000.0, "estimate")
    assert boards["mkrzero"].core == "m0plus" and boards["mkrzero"].chip == "ATSAMD21G18A"
    assert boards["due"].power is None and boards["due"].core == "m3"
    assert boards["rp2040"].miss_cycles == 56 and boards["mkrzero"].miss_cycles == 1  # given; defaults to flash_ws
    t = targets["thumbv6m-none-eabi"]
    assert (t.core, t.model, t.board, t.rust, t.emulable) == ("Cortex-M0+", "m0plus", "rp2040", True, True)
    assert t.cpp.arch_flags == ("-mcpu=cortex-m0plus", "-mthumb") and t.cpp.libs == ("-lc", "-lgcc")
    x = targets["xtensa-lx106-elf"]
    assert (x.core, x.model, x.board, x.rust, x.emulable) == ("Xtensa LX106", None, None, False, False)
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
                                     "riscv32imc-unknown-none-elf": "esp32c3"}
    assert emulate.TARGETS["thumbv6m-none-eabi"] == emulate.Target(
        "thumbv6m-none-eabi", "Cortex-M0+", "m0plus", 125.0, "RP2040 @125 MHz, board profile rp2040")
    assert emulate.TARGETS["thumbv7m-none-eabi"].mhz == 84.0 and "xtensa-lx106-elf" not in emulate.TARGETS
    assert run.CORE["riscv32imc-unknown-none-elf"] == "RV32IMC" and run.CORE["xtensa-lx106-elf"] == "Xtensa LX106"


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
    assert got["power"] == ["rp2040", "nrf52840", "esp32c3", "mkrzero", "nano33ble", "stm32f4disco"]
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
