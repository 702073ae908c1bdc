"""Cross builds CI can do without hardware: the Pico firmware and the Pico power logger for thumbv6m-none-eabi."""
import os
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_pico_firmware_builds():
    tdir = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target")) / "fw"
    env = dict(os.environ, CARGO_TARGET_DIR=str(tdir))
    subprocess.run(["cargo", "build", "--release", "-p", "lwc-board-pico", "--target", "thumbv6m-none-eabi"],
                   cwd=ROOT / "firmware", env=env, check=True)
    elf = tdir / "thumbv6m-none-eabi" / "release" / "lwc-board-pico"
    out = subprocess.run(["arm-none-eabi-objdump", "-h", str(elf)], capture_output=True, text=True, check=True).stdout
    # The second-stage bootloader must sit at the start of flash, the vector table right after.
    sections = {l.split()[1]: int(l.split()[3], 16) for l in out.splitlines() if l.strip()[:1].isdigit()}
    assert sections[".boot2"] == 0x10000000
    assert sections[".vector_table"] == 0x10000100


def test_pico_power_logger_builds():
    """The RP2040 power logger (docs/power.md): same target, same flash layout as the bench."""
    tdir = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target")) / "fw"
    env = dict(os.environ, CARGO_TARGET_DIR=str(tdir))
    subprocess.run(["cargo", "build", "--release", "--locked", "-p", "lwc-pico-logger", "--target", "thumbv6m-none-eabi"],
                   cwd=ROOT / "firmware", env=env, check=True)
    elf = tdir / "thumbv6m-none-eabi" / "release" / "lwc-pico-logger"
    out = subprocess.run(["arm-none-eabi-objdump", "-h", str(elf)], capture_output=True, text=True, check=True).stdout
    sections = {l.split()[1]: int(l.split()[3], 16) for l in out.splitlines() if l.strip()[:1].isdigit()}
    assert sections[".boot2"] == 0x10000000
    assert sections[".vector_table"] == 0x10000100
    # the trigger's interrupt has its own handler: cortex-m-rt aliases an unhandled one to DefaultHandler
    nm = subprocess.run(["arm-none-eabi-nm", str(elf)], capture_output=True, text=True, check=True).stdout
    addr = {l.split()[2]: l.split()[0] for l in nm.splitlines() if len(l.split()) == 3}
    assert addr["IO_IRQ_BANK0"] != addr["DefaultHandler"]
