"""data/mcu-sizes.csv cannot drift from the images: a sample of images is built and measured
again (mcu/run.py's own measuring code) and must give the committed rows exactly.
Run with the mcu environment: CARGO_TARGET_DIR=target/mcu .venv/bin/python -m pytest -q tests/energy
"""
from __future__ import annotations

import importlib.util
import pathlib
import sys

import pytest
import test_emulated_cycles

REPO = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "mcu"))

_spec = importlib.util.spec_from_file_location("mcu_sizes", REPO / "scripts" / "data" / "mcu-sizes.py")
ms = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(ms)

TABLE = REPO / "data" / "mcu-sizes.csv"
# One stream cipher, one AEAD, one block cipher, DRACO: on every target.
SAMPLE = ("trivium", "rc_ascon_aead128", "rc_speck64_128", "draco_fast")


def committed() -> dict:
    return test_emulated_cycles.committed(TABLE, ms.COLUMNS, key=lambda r: (r[2], r[3]))


def test_every_image_of_the_manifest_has_a_row_per_target():
    # Rust images on the Rust targets; on an LX106 target (the ESP8266) the C/C++ images of
    # mcu/lx106_images.py.
    import lx106_images  # noqa: E402

    table = committed()
    lx = {k: v for k, v in table.items() if k[1] in ms.lx106_targets()}
    assert set(lx) == {(i.image, t) for i in lx106_images.IMAGES for t in ms.lx106_targets()}
    test_emulated_cycles.manifest_covers({k: v for k, v in table.items() if k not in lx})


def test_lx106_sample_measured_again_equals_the_committed_table(tmp_path):
    import lx106  # noqa: E402
    import lx106_images  # noqa: E402
    import run  # noqa: E402

    try:
        lx106.check_tools()
    except lx106.Lx106Error as e:
        pytest.skip(str(e))
    imgs = [i for i in lx106_images.IMAGES if i.image in test_emulated_cycles.LX106_SAMPLE]
    if len(lx106_images.available(imgs)[0]) != len(imgs):
        pytest.skip("NIST LWC tree absent")
    sizes, _ = run.lx106_measure(["Os"], [128], lambda m: None, images=imgs)
    rows = [(i, dict(zip(run.SIZE_COLS, map(str, r)))) for i, r in enumerate(sizes)]
    fresh = {(r[2], r[3]): r for r in ms.table(rows)}
    assert len(fresh) == len(imgs)
    table = committed()
    for key, row in fresh.items():
        assert table[key] == row, f"{key}: committed {table[key]} != measured {row}"


def test_sample_measured_again_equals_the_committed_table():
    import build  # noqa: E402
    import run  # noqa: E402

    build.build_rust(("Os",))
    imgs = [im for im in run.images(("Os",)) if im.language == "Rust" and im.image in SAMPLE]
    assert len(imgs) == len(SAMPLE) * len(build.RUST_TARGETS)
    sizes, _ = run.measure(imgs, [128], lambda m: None)
    rows = [(i, dict(zip(run.SIZE_COLS, map(str, r)))) for i, r in enumerate(sizes)]
    fresh = {(r[2], r[3]): r for r in ms.table(rows)}
    assert len(fresh) == len(imgs)
    table = committed()
    for key, row in fresh.items():
        assert table[key] == row, f"{key}: committed {table[key]} != measured {row}; regenerate (scripts/data/mcu-sizes.py)"


def _row(**kw):
    d = dict(cipher="X", implementation="rust", language="Rust", image="x", target="thumbv6m-none-eabi",
             core="Cortex-M0+", profile="Os", method="image-minus-baseline", text="90", rodata="10", data="0",
             bss="8", flash_bytes="100", ram_static_bytes="8", stack_bytes="64", emulated="yes")
    d.update(kw)
    return d


def test_table_keeps_emulated_rust_os_rows_only():
    rows = [(2, _row()), (3, _row(language="C++", image="y")), (4, _row(profile="O3", image="z")),
            (5, _row(emulated="no", stack_bytes="", image="w"))]
    assert ms.table(rows) == [["X", "rust", "x", "thumbv6m-none-eabi", "Cortex-M0+", "Os", "image-minus-baseline",
                               "100", "8", "64"]]


def test_table_keeps_the_c_rows_of_an_lx106_target_and_merges_one_target():
    lx = dict(target="xtensa-lx106-elf", core="Xtensa LX106")
    rows = [(2, _row()), (3, _row(language="C++", image="y", **lx)), (4, _row(language="C", image="z", **lx)),
            (5, _row(language="C++", image="w", emulated="no", stack_bytes="", **lx))]
    want_y = ["X", "rust", "y", "xtensa-lx106-elf", "Xtensa LX106", "Os", "image-minus-baseline", "100", "8", "64"]
    got = ms.table(rows, "xtensa-lx106-elf")
    assert [r[2] for r in got] == ["y", "z"] and got[0] == want_y
    # --target keeps every other target's row of the existing table and replaces its own
    old = ms.render([["A", "rust", "a", "thumbv6m-none-eabi", "Cortex-M0+", "Os", "image-minus-baseline", "1", "2", "3"],
                     ["B", "c", "old", "xtensa-lx106-elf", "Xtensa LX106", "Os", "image-minus-baseline", "9", "9", "9"]])
    merged = ms.merge(got, old, "xtensa-lx106-elf")
    assert [r[2] for r in merged] == ["a", "y", "z"]
    with pytest.raises(ms.InputError, match="no emulated Os rows for riscv32"):
        ms.table(rows[1:], "riscv32imc-unknown-none-elf")


def test_bad_rows_and_files_are_one_error_line(tmp_path, capsys):
    with pytest.raises(ms.InputError, match="line 2: stack_bytes '' is not a byte count"):
        ms.table([(2, _row(stack_bytes=""))])
    with pytest.raises(ms.InputError, match="appears twice"):
        ms.table([(2, _row()), (3, _row())])
    bad = tmp_path / "s.csv"
    bad.write_text("cipher,flash_bytes\nX,1\n")
    out = tmp_path / "t.csv"
    assert ms.main([str(bad), "--out", str(out)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"error: {bad}: line 1: missing column"), err
    assert not out.exists()
