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
