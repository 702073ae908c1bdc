"""The power logger sketch (firmware/arduino/lwcpower, docs/power.md) without hardware: its
sampling and framing code cross-compiles freestanding, its configuration registers are the
datasheets', and the sketch built for the host with the stand-in (a simulated INA219 and a
trigger schedule) prints lines that `lwcbench collect` joins to a board log into the energy
computed by hand."""
import csv
import os
import subprocess
import zlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SKETCH = ROOT / "firmware" / "arduino" / "lwcpower"
STANDIN = ROOT / "firmware" / "arduino" / "standin"
FLAGS = ["-x", "c++", "-std=c++17", "-Os", "-ffreestanding", "-fno-exceptions", "-fno-rtti", "-Wall", "-Werror"]
CROSS = {
    "cortex-m0plus": ["arm-none-eabi-g++", "-mcpu=cortex-m0plus", "-mthumb"],
    "esp8266-lx106": ["xtensa-lx106-elf-g++"],
}


def lwcbench_bin() -> str:
    return os.environ.get("LWCBENCH_BIN", str(ROOT / "target" / "release" / "lwcbench"))


@pytest.mark.parametrize("name", sorted(CROSS))
def test_logger_core_cross_compiles(name, tmp_path):
    r = subprocess.run(CROSS[name] + FLAGS + ["-c", str(SKETCH / "power.cpp"), "-o", str(tmp_path / "p.o")],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


CONFIG_MAIN = r"""
#include <stdio.h>
#include "power.h"
uint64_t lwp_micros(void) { return 0; }
bool lwp_reg_write(uint8_t, uint8_t, uint16_t) { return true; }
bool lwp_reg_read(uint8_t, uint8_t, uint16_t *) { return true; }
void lwp_write(const uint8_t *, size_t) {}
void lwp_irq_off(void) {}
void lwp_irq_on(void) {}
int main() {
    LwpConfig a = {LWP_INA219, 0x40, 100000, 10000, 532, 1, "D2"};
    LwpConfig b = {LWP_INA219, 0x40, 100000, 10000, 532, 128, "D2"};
    LwpConfig c = {LWP_INA226, 0x40, 100000, 10000, 1100, 1, "D2"};
    LwpConfig d = {LWP_INA219, 0x40, 100000, 10000, 500, 1, "D2"};
    LwpConfig e = {LWP_INA219, 0x40, 100000, 10000, 148, 4, "D2"};
    printf("%04x %u %04x %u %04x %u %04x %04x\n", lwp_config_reg(a), lwp_period_us(a), lwp_config_reg(b),
           lwp_period_us(b), lwp_config_reg(c), lwp_period_us(c), lwp_config_reg(d), lwp_config_reg(e));
}
"""


def test_config_registers_and_sample_periods(tmp_path):
    (tmp_path / "m.cpp").write_text(CONFIG_MAIN)
    subprocess.run(["g++", "-std=c++17", "-I", str(SKETCH), str(tmp_path / "m.cpp"), str(SKETCH / "power.cpp"),
                    "-o", str(tmp_path / "m")], check=True)
    out = subprocess.run([str(tmp_path / "m")], capture_output=True, text=True, check=True).stdout.split()
    # INA219 12 bit, 32 V, ±320 mV, continuous = its power-on default 399Fh (SBOS448,
    # configuration register); a sample = shunt + bus conversion = 2 × 532 µs.
    # 128 averages: ADC fields 1111 → 3FFFh, 128 × 1.064 ms = 136,192 µs.
    # INA226 1.1 ms, no averaging, continuous = its power-on default 4127h (SBOS547).
    # 500 µs is no INA219 conversion time, and averaging needs 12 bits: refused (0).
    assert out == ["399f", "1064", "3fff", "136192", "4127", "2200", "0000", "0000"]


def test_logger_on_host_is_joined_to_a_board_log(tmp_path):
    exe = tmp_path / "logger"
    subprocess.run(["g++", "-O2", "-std=c++17", "-Wall", "-Werror", "-I", str(STANDIN), "-x", "c++",
                    str(SKETCH / "lwcpower.ino"), "-x", "none", str(SKETCH / "power.cpp"),
                    str(STANDIN / "host_power.cpp"), "-o", str(exe)], check=True)
    run = subprocess.run([str(exe)], capture_output=True, timeout=60, check=True)
    assert "config register 399f" in run.stderr.decode()
    lines = run.stdout.decode().splitlines()
    seqs = []
    for l in lines:
        body, crc = l.rsplit(" *", 1)
        assert int(crc, 16) == zlib.crc32(body.encode()), l
        f = body.split()
        if f[1] in "PT":
            seqs.append(int(f[2]))
    assert lines[0].startswith("LWCP H 1 sensor=ina219 shunt_uohm=100000 shunt_tol_ppm=10000 tick_hz=1000000 "
                               "conv_us=532 avg=1 ")
    assert seqs == list(range(len(seqs)))
    edges = [l.split(" *")[0].split()[3:] for l in lines if l.startswith("LWCP T ")]
    # the simulated board's schedule (standin/host_power.cpp), µs
    assert edges == [["1", "1", "10000"], ["1", "0", "30000"], ["2", "1", "45000"], ["2", "0", "70000"],
                     ["3", "1", "92000"], ["3", "0", "122000"]]
    samples = [l.split(" *")[0].split()[3:] for l in lines if l.startswith("LWCP P ")]
    # a sample every 1.064 ms (the reads take simulated time, the schedule does not drift)
    ts = [int(s[0]) for s in samples]
    assert all(1060 <= b - a <= 1070 for a, b in zip(ts, ts[1:]))
    assert all((s[2], s[3], s[4]) == (("1", "1250", "900") if s[2] == "1" else ("0", "1250", "400")) for s in samples)
    # A board log for the same three batches (board ticks = the logger's µs here), 20 µs per
    # operation: 1000, 1250 and 1500 operations.
    def line(b):
        return f"{b} *{zlib.crc32(b.encode()):08x}\n"
    board = line("LWCB H 1 board=sim mcu=none cpu_hz=1000000 tick_hz=1000000 timer=t cycles=none reps=3 warmup=0 "
                 "groups=1 min_sample_ticks=100 seed=1 ciphers=Trivium/cpp/C%2B%2B")
    run_crc = 0
    for i, (start, end) in enumerate([(10000, 30000), (45000, 70000), (92000, 122000)]):
        ops = (end - start) // 20
        board += line(f"LWCB M {i} {i} {ops} {start} {end}")
        body = f"LWCB S {i} Trivium cpp C%2B%2B stream keystream s,s 1024 random {i} {ops} {end - start} -"
        run_crc = zlib.crc32((body + "\n").encode(), run_crc)
        board += line(body)
    board += line(f"LWCB E samples=3 warmup=0 crc={run_crc:08x}")
    (tmp_path / "board.log").write_text(board)
    (tmp_path / "logger.log").write_bytes(run.stdout)
    r = subprocess.run([lwcbench_bin(), "collect", "--from-log", str(tmp_path / "board.log"), "--power-from-log",
                        str(tmp_path / "logger.log"), "-o", str(tmp_path / "run")], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0, r.stderr
    with open(tmp_path / "run" / "energy.csv", newline="") as f:
        (row,) = list(csv.DictReader(f))
    # By hand: 5.00 V × (90 − 40) mA = 0.25 W above the baseline; × 20 µs = 5 µJ per operation.
    e, u = float(row["energy_per_op_j_measured"]), float(row["energy_per_op_u_j"])
    assert abs(e - 5e-6) <= u and u < 0.05 * 5e-6, (e, u)
    assert row["batches"] == "3" and row["operations"] == "3750"
