"""Cross builds CI can do without hardware: the Pico firmware and the Pico power logger for thumbv6m-none-eabi."""
import os
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def build_rp2040(package: str) -> Path:
    """Build `package` for the RP2040 and return its ELF; the second-stage bootloader must sit
    at the start of flash, the vector table right after."""
    tdir = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target")) / "fw"
    env = dict(os.environ, CARGO_TARGET_DIR=str(tdir))
    subprocess.run(["cargo", "build", "--release", "--locked", "-p", package, "--target", "thumbv6m-none-eabi"],
                   cwd=ROOT / "firmware", env=env, check=True)
    elf = tdir / "thumbv6m-none-eabi" / "release" / package
    out = subprocess.run(["arm-none-eabi-objdump", "-h", str(elf)], capture_output=True, text=True, check=True).stdout
    sections = {l.split()[1]: int(l.split()[3], 16) for l in out.splitlines() if l.strip()[:1].isdigit()}
    assert sections[".boot2"] == 0x10000000
    assert sections[".vector_table"] == 0x10000100
    return elf


def test_pico_firmware_builds():
    build_rp2040("lwc-board-pico")


def test_pico_power_logger_builds():
    """The RP2040 power logger (docs/power.md)."""
    elf = build_rp2040("lwc-pico-logger")
    # the trigger's interrupt has its own handler: cortex-m-rt aliases an unhandled one to DefaultHandler
    nm = subprocess.run(["arm-none-eabi-nm", str(elf)], capture_output=True, text=True, check=True).stdout
    addr = {l.split()[2]: l.split()[0] for l in nm.splitlines() if len(l.split()) == 3}
    assert addr["IO_IRQ_BANK0"] != addr["DefaultHandler"]
