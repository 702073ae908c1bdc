"""lwcbench.choose: the CLI's answer through the same resolver (crates/choose, lwcbench_choose::choose)."""
import json
import os
import pathlib
import subprocess

import pytest

import lwcbench

REPO = pathlib.Path(__file__).resolve().parents[2]


def _cli():
    exe = pathlib.Path(os.environ.get("CARGO_TARGET_DIR", REPO / "target")) / "release" / "lwcbench"
    if not exe.exists():
        pytest.skip(f"{exe} not built")
    return exe


def test_python_equals_the_cli_json():
    args = ["--board", "rp2040", "--radio", "LoRa-SF9", "--interval", "10m", "--payload", "16B", "--flash", "4KiB"]
    cli = json.loads(subprocess.run([_cli(), "choose", "--json", *args], check=True, capture_output=True).stdout)
    py = lwcbench.choose(board="rp2040", radio="LoRa-SF9", interval="10m", payload="16B", flash="4KiB")
    assert py == cli
    assert py["schema"] == "lwcbench-choose/2"
    assert py["ranking"][0] == py["chosen"]


def test_allow_provisional_brings_draco_back_labelled():
    find = lambda rep: next(c for c in rep["candidates"] if c["id"] == "DRACO/rust-fast")  # noqa: E731
    off = lwcbench.choose("nrf52840", "BLE-1M", "1s")
    assert find(off)["removed_by"] == ["status"]
    on = lwcbench.choose("nrf52840", "BLE-1M", "1s", allow_provisional=True, require="any")
    d = find(on)
    assert d["passed"] and d["status"] == "provisional"
    assert any(r.startswith("PROVISIONAL") for r in d["reasons"])


def test_bad_input_raises_naming_the_option(tmp_path):
    with pytest.raises(ValueError, match="^--board"):
        lwcbench.choose("uno", "LoRa-SF9", "10m")
    with pytest.raises(ValueError, match="^--flash: no candidate fits"):
        lwcbench.choose("rp2040", "LoRa-SF9", "10m", flash="100B", out=tmp_path / "o")
    assert not (tmp_path / "o").exists()


def test_out_writes_the_page(tmp_path):
    rep = lwcbench.choose("esp32c3", "WiFi-n-MCS7", "200ms", payload="28800B", out=tmp_path)
    assert (tmp_path / "choose.html").read_text().count("<svg") == 1
    assert json.loads((tmp_path / "choose.json").read_text()) == rep
    assert (tmp_path / "choose-dataset.csv").is_file()


def test_out_is_replaced_only_with_force(tmp_path):
    out = tmp_path / "answer"
    first = lwcbench.choose("rp2040", "LoRa-SF9", "10m", out=out)
    with pytest.raises(ValueError, match="already holds an answer"):
        lwcbench.choose("esp32c3", "WiFi-n-MCS7", "200ms", payload="28800B", out=out)
    assert json.loads((out / "choose.json").read_text()) == first
    assert not (out / "choose-dataset.csv").exists()
    second = lwcbench.choose("esp32c3", "WiFi-n-MCS7", "200ms", payload="28800B", out=out, force=True)
    assert json.loads((out / "choose.json").read_text()) == second
    assert (out / "choose-dataset.csv").is_file()


def test_float_arguments_are_bounded():
    with pytest.raises(ValueError, match=r"^--battery-v: 1e-320 is not between 0\.5 and 60 V$"):
        lwcbench.choose("rp2040", "LoRa-SF9", "10m", battery_v=1e-320)
    with pytest.raises(ValueError, match=r"^--battery-mah: inf is not between 1 and 1000000 mAh$"):
        lwcbench.choose("rp2040", "LoRa-SF9", "10m", battery_mah=float("inf"))


def test_every_cli_option_is_a_keyword(tmp_path):
    """--region, --sleep-ua, --active-ma, --dtim, --boards and --radios as keywords: the same
    answer as the CLI with the same options."""
    boards = tmp_path / "boards.csv"
    boards.write_text(
        "board,chip,core,target,clock_mhz,volts,active_ma,sleep_ua,status,source,cycles_of\n"
        'mine,STM32L476,Cortex-M4F,thumbv7em-none-eabihf,80,3.3,10,2,estimate,"bench",nrf52840\n'
    )
    radios = tmp_path / "radios.csv"
    radios.write_text(
        "radio,kind,bitrate_bps,sf,bw_hz,cr,preamble_symbols,overhead_bytes,max_payload,preamble_s,tx_w,status,source\n"
        'Wire,fixed,10000000,0,0,0,0,78,1460,0,0.2,estimate,"my PHY"\n'
    )
    args = ["--board", "mine", "--radio", "Wire", "--interval", "1s", "--sleep-ua", "5", "--active-ma", "12",
            "--boards", str(boards), "--radios", str(radios)]
    cli = json.loads(subprocess.run([_cli(), "choose", "--json", *args], check=True, capture_output=True).stdout)
    py = lwcbench.choose("mine", "Wire", "1s", sleep_ua=5, active_ma=12, boards=boards, radios=radios)
    assert py == cli
    assert py["request"]["sleep_ua"] == 5.0
    wifi = lwcbench.choose("esp32c3", "WiFi-n-MCS7", "100ms", dtim=10, region=None)
    assert any("DTIM 10" in (c["figures"] or {}).get("receive", "") for c in wifi["candidates"])
    with pytest.raises(ValueError, match="^--region: 'mars'"):
        lwcbench.choose("rp2040", "LoRa-SF9", "1h", region="mars")
    with pytest.raises(ValueError, match="^--dtim: 2 is not one of 1, 3, 10"):
        lwcbench.choose("esp32c3", "WiFi-n-MCS7", "1s", dtim=2)
