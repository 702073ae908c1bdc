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
    test_emulated_cycles.manifest_covers(committed())


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
