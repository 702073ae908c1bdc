"""lwcbench.load_energy and Results.energy on hand-written energy.csv / energy_batches.csv.

The rows are the worked example of docs/power.md (1,000 Trivium keystream operations of 1024
bits in 20 ms at 0.25 W net: 5 mJ per batch, 5 µJ per operation, 39.0625 nJ per byte,
U = 82 µJ per batch = 0.082 µJ per operation), written here by hand in the engine's column
order (crates/engine/src/collect/logger.rs, EnergyRow and BatchRow).
"""
import json
import shutil

import numpy as np
import pandas as pd
import pytest

import lwcbench
from lwcbench import ResultsError

from conftest import write_rows

ENERGY_FIELDS = [
    "cipher", "implementation", "language", "scenario", "kiv", "size_bits", "payload", "batches", "operations",
    "samples_min", "energy_per_op_j_measured", "energy_per_op_u_j", "energy_per_byte_j_measured",
    "energy_per_byte_u_j", "energy_per_op_j_total", "mean_power_w", "baseline_power_w", "energy_source",
]
LABEL = "measured:ina219 (shunt 0.1 Ω ±1 %)"
ENERGY_ROWS = [
    ["Trivium", "rust-fast", "rust", "keystream", "s,s", "1024", "random", "1", "1000", "18", "5e-6", "8.2e-8",
     "3.90625e-8", "6.40625e-10", "9e-6", "0.45", "0.2", LABEL],
    # init has no bytes: the per-byte cells are empty
    ["Trivium", "rust-fast", "rust", "init", "s,s", "0", "random", "2", "4000", "9", "1.25e-6", "4e-8",
     "", "", "2e-6", "0.3", "0.2", LABEL],
]
BATCH_FIELDS = [
    "batch", "window", "cipher", "implementation", "scenario", "kiv", "size_bits", "rep", "operations", "samples",
    "duration_s", "mean_power_w", "baseline_power_w", "energy_j_measured", "u_random_j", "u_systematic_j",
]
BATCH_ROWS = [["3", "3", "Trivium", "rust-fast", "keystream", "s,s", "1024", "0", "1000", "18", "0.02", "0.45",
               "0.2", "0.005", "1e-6", "4.11e-5"]]


def write_energy(d, rows=ENERGY_ROWS, batch_rows=BATCH_ROWS):
    write_rows(d / "energy.csv", ENERGY_FIELDS, [dict(zip(ENERGY_FIELDS, r)) for r in rows])
    write_rows(d / "energy_batches.csv", BATCH_FIELDS, [dict(zip(BATCH_FIELDS, r)) for r in batch_rows])


def test_energy_columns_are_typed(tmp_path):
    write_energy(tmp_path)
    e = lwcbench.load_energy(tmp_path / "energy.csv")
    for col in ("batches", "operations", "samples_min", "size_bits"):
        assert str(e[col].dtype) == "Int64", col
    for col in ("energy_per_op_j_measured", "energy_per_op_u_j", "energy_per_byte_j_measured", "energy_per_byte_u_j"):
        assert e[col].dtype == np.float64, col
    assert isinstance(e["energy_source"].dtype, pd.CategoricalDtype)
    assert list(e["energy_source"].cat.categories) == [LABEL]
    assert isinstance(e["kiv"].dtype, pd.CategoricalDtype)
    ks = e[e["scenario"] == "keystream"].iloc[0]
    assert ks["energy_per_op_j_measured"] == pytest.approx(5e-6)
    # 5 µJ / 128 B
    assert ks["energy_per_byte_j_measured"] == pytest.approx(3.90625e-8)
    assert ks["energy_per_op_u_j"] / ks["energy_per_op_j_measured"] == pytest.approx(0.0164)
    init = e[e["scenario"] == "init"].iloc[0]
    assert np.isnan(init["energy_per_byte_j_measured"]) and np.isnan(init["energy_per_byte_u_j"])
    b = lwcbench.load_energy(tmp_path / "energy_batches.csv")
    for col in ("batch", "window", "rep", "operations", "samples"):
        assert str(b[col].dtype) == "Int64", col
    # 0.25 W net × 20 ms
    assert b["energy_j_measured"].iloc[0] == pytest.approx((0.45 - 0.2) * 0.02)
    assert b["u_systematic_j"].dtype == np.float64
    # a directory means its energy.csv
    assert len(lwcbench.load_energy(tmp_path)) == 2


def test_bad_energy_files_name_file_column_and_line(tmp_path):
    bad = [r[:] for r in ENERGY_ROWS]
    bad[1][11] = "about 4e-8"
    write_energy(tmp_path, bad)
    with pytest.raises(ResultsError, match=r"energy\.csv: column energy_per_op_u_j is not float"):
        lwcbench.load_energy(tmp_path / "energy.csv")
    modelled = [r[:] for r in ENERGY_ROWS]
    modelled[1][17] = "model:esp32"
    write_energy(tmp_path, modelled)
    with pytest.raises(ResultsError, match=r"energy\.csv: line 3: column energy_source: 'model:esp32'"):
        lwcbench.load_energy(tmp_path / "energy.csv")
    write_rows(tmp_path / "energy.csv", ENERGY_FIELDS[:-1], [dict(zip(ENERGY_FIELDS, ENERGY_ROWS[0][:-1]))])
    with pytest.raises(ResultsError, match="energy_source missing"):
        lwcbench.load_energy(tmp_path / "energy.csv")
    with pytest.raises(ResultsError, match="not energy.csv or energy_batches.csv"):
        lwcbench.load_energy(tmp_path / "summary.csv")


def test_results_carry_the_energy_of_a_collected_run(run_dir, tmp_path):
    d = tmp_path / "collected"
    shutil.copytree(run_dir, d)
    assert lwcbench.load(d).energy is None
    write_energy(d)
    run = json.loads((d / "run.json").read_text(encoding="utf-8"))
    run["files"] += ["energy.csv", "energy_batches.csv"]
    (d / "run.json").write_text(json.dumps(run), encoding="utf-8")
    res = lwcbench.load(d)
    assert res.energy["energy_per_op_u_j"].dtype == np.float64
    assert str(res.energy_batches["window"].dtype) == "Int64"
    assert res.tables["energy"] is res.energy
