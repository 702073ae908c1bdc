"""data/emulated-cycles.csv cannot drift from the emulator: a sample of images is built and
emulated again (mcu/run.py's own measuring code) and must give the committed rows exactly.
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

_spec = importlib.util.spec_from_file_location("emulated_cycles", REPO / "scripts" / "emulated-cycles.py")
ec = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(ec)

TABLE = REPO / "data" / "emulated-cycles.csv"
# One stream cipher, one AEAD, one block cipher, DRACO: on every target.
SAMPLE = ("trivium", "rc_ascon_aead128", "rc_speck64_128", "draco_fast")


def committed(table=TABLE, columns=ec.COLUMNS) -> dict:
    """Rows of a generated table by (image, target); its header must be `columns`."""
    with open(table, newline="") as f:
        rows = list(csv.reader(line for line in f if not line.startswith("#")))
    assert rows[0] == columns
    return {(r[2], r[3]): r for r in rows[1:]}


def manifest_covers(table: dict) -> None:
    """Every image of mcu/images.json has a row per Rust target, and no other row exists."""
    import build  # noqa: E402

    manifest = json.loads((REPO / "mcu" / "images.json").read_text())
    want = {(m["image"], t) for m in manifest for t in build.RUST_TARGETS}
    assert want == set(table), f"missing {sorted(want - set(table))}, extra {sorted(set(table) - want)}"


def test_every_image_of_the_manifest_has_a_row_per_target():
    # A new image (mcu/images.json) without regenerated cycles fails here.
    manifest_covers(committed())


def test_sample_re_emulated_equals_the_committed_table():
    import build  # noqa: E402
    import run  # noqa: E402

    build.build_rust(("Os",))
    imgs = [im for im in run.images(("Os",)) if im.language == "Rust" and im.image in SAMPLE]
    assert len(imgs) == len(SAMPLE) * len(build.RUST_TARGETS)
    _, counts = run.measure(imgs, list(ec.NBITS), lambda m: None)
    rows = [(i, dict(zip(run.COUNT_COLS, map(str, r)))) for i, r in enumerate(counts)]
    fresh = {(r[2], r[3]): r for r in ec.table(rows)}
    table = committed()
    for key, row in fresh.items():
        assert table[key] == row, f"{key}: committed {table[key]} != emulated {row}; regenerate (scripts/emulated-cycles.py)"


def _row(**kw):
    d = dict(cipher="X", implementation="rust", language="Rust", image="x", target="thumbv6m-none-eabi",
             core="Cortex-M0+", profile="Os", phase="keystream", nbits="128", metric="cycles_est", value="100",
             unit="cycles", timing_model="m0plus")
    d.update(kw)
    return d


def test_table_projects_init_and_the_two_lengths():
    rows = [(2, _row(phase="init", nbits="0", value="700")), (3, _row(value="1000")),
            (4, _row(nbits="1024", value="7000")), (5, _row(nbits="8", value="99")),
            (6, _row(nbits="1024", value="5", metric="instructions")), (7, _row(profile="O3", value="1"))]
    assert ec.table(rows) == [["X", "rust", "x", "thumbv6m-none-eabi", "Cortex-M0+", "Os", "m0plus", "keystream",
                               "700", "1000", "7000"]]


def test_missing_length_and_bad_file_are_one_error_line(tmp_path, capsys):
    with pytest.raises(ec.InputError, match="no cycles_est for 1024 bits"):
        ec.table([(2, _row(phase="init", nbits="0", value="700")), (3, _row(value="1000"))])
    bad = tmp_path / "c.csv"
    bad.write_text("cipher,value\nX,1\n")
    out = tmp_path / "t.csv"
    assert ec.main([str(bad), "--out", str(out)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"error: {bad}: line 1: missing column"), err
    assert not out.exists()
