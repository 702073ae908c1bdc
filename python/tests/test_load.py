"""lwcbench.load on a real run directory and on deliberately broken ones.

Expected values come from docs/result-files.md and from the preset's definition (two
ciphers, default sizes 1, 8, 128, 1024 bits, four key/IV variants); statistics in
summary.csv are recomputed here with pandas from samples.csv.
"""
import json
import shutil

import numpy as np
import pandas as pd
import pytest

import lwcbench
from lwcbench import ResultsError

from conftest import REPS, WARMUP, read_rows, write_rows

SIZES = [1, 8, 128, 1024]
KIVS = ["s,s", "s,r", "r,s", "r,r"]


def expected_groups():
    """Groups of the quick preset derived from the catalogue: a stream cipher has full and
    keystream (4 kiv x 4 sizes each) plus init (4 kiv); an AEAD has encrypt and decrypt
    (4 x 4 each) plus keysetup (4)."""
    n = 0
    for c in lwcbench.ciphers():
        if c["cipher"] in ("ChaCha20", "ChaCha20-Poly1305"):
            n += 2 * len(KIVS) * len(SIZES) + len(KIVS)
    return n


def test_dtypes(results):
    for df in (results.samples, results.warmup, results.summary):
        for col in ("cipher", "implementation", "scenario", "kiv", "language", "family"):
            assert isinstance(df[col].dtype, pd.CategoricalDtype), col
        assert list(df["kiv"].cat.categories) == ["s,s", "s,r", "r,s", "r,r", "all"]
        assert df["kiv"].cat.ordered
        assert str(df["size_bits"].dtype) == "Int64"
    for col in ("rep", "batch"):
        assert str(results.samples[col].dtype) == "Int64"
    for col in ("n", "outliers", "batch"):
        assert str(results.summary[col].dtype) == "Int64"
    assert results.samples["ns_per_op"].dtype == np.float64
    for col in ("mean_ns", "median_ns", "ci95_lo_ns", "mbit_per_s"):
        assert results.summary[col].dtype == np.float64
    assert isinstance(results.comparison["kiv"].dtype, pd.CategoricalDtype)
    assert results.comparison["ratio_cpp_rust"].dtype == np.float64
    assert isinstance(results.run, dict)


def test_row_counts_follow_the_plan(results):
    g = expected_groups()
    assert g > 0
    # rows of the scenarios this test knows; a newer preset may add scenarios on top
    known = ["full", "keystream", "init", "keysetup", "encrypt", "decrypt"]
    assert results.samples["scenario"].isin(known).sum() == REPS * g
    assert results.warmup["scenario"].isin(known).sum() == WARMUP * g
    assert len(results.samples) == REPS * results.run["groups"]
    assert len(results.warmup) == WARMUP * results.run["groups"]
    assert results.run["groups"] >= g
    assert results.run["reps"] == REPS and results.run["warmup"] == WARMUP
    assert results.run["preset"] == "quick"
    keys = ["cipher", "implementation", "scenario", "kiv", "size_bits"]
    keys += ["payload"] if "payload" in results.samples else []
    reps = results.samples.groupby(keys, observed=True)["rep"].apply(lambda s: sorted(s.tolist()))
    assert len(reps) == results.run["groups"]
    assert all(r == list(range(REPS)) for r in reps)
    sized = results.samples[results.samples["scenario"].isin(["full", "keystream", "encrypt", "decrypt"])
                            & (results.samples.get("payload", "random") == "random")]
    assert sorted(sized["size_bits"].unique()) == SIZES
    unsized = results.samples[results.samples["scenario"].isin(["init", "keysetup"])]
    assert set(unsized["size_bits"].unique()) == {0}
    assert set(results.samples["kiv"].astype(str)) == set(KIVS)


def test_summary_agrees_with_samples(results):
    keys = ["cipher", "implementation", "scenario", "kiv", "size_bits"]
    keys += ["payload"] if "payload" in results.samples else []
    s = results.samples
    got = s.groupby(keys, observed=True)["ns_per_op"].agg(["count", "median", "mean", "min", "max"]).reset_index()
    summ = results.summary[results.summary["kiv"] != "all"]
    m = got.merge(summ, on=keys, how="outer", indicator=True)
    assert (m["_merge"] == "both").all(), "summary groups differ from sample groups"
    assert (m["n"] == m["count"]).all()
    np.testing.assert_allclose(m["median_ns"], m["median"], rtol=1e-9)
    np.testing.assert_allclose(m["mean_ns"], m["mean"], rtol=1e-9)
    np.testing.assert_allclose(m["min_ns"], m["min"], rtol=1e-12)
    np.testing.assert_allclose(m["max_ns"], m["max"], rtol=1e-12)
    # The bootstrap means sum the same values in another order: when every sample is equal, an
    # interval end may differ from the mean in the last bits, so compare within 1e-12.
    tol = 1e-12 * m["mean_ns"].abs()
    assert (m["ci95_lo_ns"] <= m["mean_ns"] + tol).all() and (m["mean_ns"] <= m["ci95_hi_ns"] + tol).all()
    # Pooled rows: all four key/IV variants together.
    pk = [k for k in keys if k != "kiv"]
    pooled = s.groupby(pk, observed=True)["ns_per_op"].agg(["count", "median"]).reset_index()
    pm = pooled.merge(results.summary[results.summary["kiv"] == "all"], on=pk, how="outer", indicator=True)
    assert (pm["_merge"] == "both").all()
    assert (pm["n"] == pm["count"]).all()
    documented = pm["scenario"].isin(["full", "keystream", "init", "keysetup", "encrypt", "decrypt"])
    assert (pm.loc[documented, "n"] == len(KIVS) * REPS).all()
    np.testing.assert_allclose(pm["median_ns"], pm["median"], rtol=1e-9)
    # Throughput is defined from the median (docs/result-files.md).
    sized = results.summary[results.summary["size_bits"] > 0]
    np.testing.assert_allclose(sized["mbit_per_s"], sized["size_bits"].astype(float) / sized["median_ns"] * 1000, rtol=1e-9)
    assert results.summary.loc[results.summary["size_bits"] == 0, "mbit_per_s"].isna().all()


def test_load_accepts_a_file_inside_the_directory(run_dir):
    r = lwcbench.load(run_dir / "run.json")
    assert len(r.samples) > 0
    assert "samples" in repr(r)


# ------------------------------------------------------------------------------------------
# broken directories


def _broken(run_dir, tmp_path, edit):
    d = tmp_path / "broken"
    shutil.copytree(run_dir, d)
    edit(d)
    return d


def _drop_column(name, col):
    def edit(d):
        fields, rows = read_rows(d / name)
        fields = [f for f in fields if f != col]
        write_rows(d / name, fields, [{k: v for k, v in r.items() if k != col} for r in rows])
    return edit


def _set_value(name, col, value):
    def edit(d):
        fields, rows = read_rows(d / name)
        rows[0][col] = value
        write_rows(d / name, fields, rows)
    return edit


@pytest.mark.parametrize("missing", ["samples.csv", "warmup.csv", "summary.csv", "comparison.csv", "run.json"])
def test_missing_file_is_named(run_dir, tmp_path, missing):
    d = _broken(run_dir, tmp_path, lambda d: (d / missing).unlink())
    with pytest.raises(FileNotFoundError) as e:
        lwcbench.load(d)
    assert missing in str(e.value)


def test_missing_directory(tmp_path):
    with pytest.raises(FileNotFoundError) as e:
        lwcbench.load(tmp_path / "nowhere")
    assert "nowhere" in str(e.value)


@pytest.mark.parametrize(
    "name, edit, words",
    [
        ("summary.csv", _drop_column("summary.csv", "median_ns"), ["summary.csv", "median_ns"]),
        ("samples.csv", _drop_column("samples.csv", "ns_per_op"), ["samples.csv", "ns_per_op"]),
        ("comparison.csv", _drop_column("comparison.csv", "ratio_cpp_rust"), ["comparison.csv", "ratio_cpp_rust"]),
        ("samples.csv", _set_value("samples.csv", "kiv", "x,y"), ["samples.csv", "kiv", "x,y"]),
        ("samples.csv", _set_value("samples.csv", "ns_per_op", "fast"), ["samples.csv", "ns_per_op"]),
        ("summary.csv", _set_value("summary.csv", "n", "2.5"), ["summary.csv", "n"]),
        ("warmup.csv", lambda d: (d / "warmup.csv").write_text(""), ["warmup.csv", "empty"]),
        ("run.json", lambda d: (d / "run.json").write_text("{not json"), ["run.json", "JSON"]),
    ],
)
def test_bad_content_names_file_and_column(run_dir, tmp_path, name, edit, words):
    d = _broken(run_dir, tmp_path, edit)
    with pytest.raises(ResultsError) as e:
        lwcbench.load(d)
    msg = str(e.value)
    assert isinstance(e.value, ValueError)
    for w in words:
        assert w in msg, (w, msg)


def test_header_only_comparison_is_empty_but_typed(results):
    # the committed catalogue has no C++/Rust twins: comparison.csv has only its header
    assert results.comparison.empty
    assert list(results.comparison.columns[:5]) == ["cipher", "variant", "scenario", "kiv", "size_bits"]


def test_run_json_records_the_python_call(results):
    args = " ".join(results.run["args"])
    assert "lwcbench.run(" in args and "preset='quick'" in args
    assert results.run["seed"] == 20240607
    json.dumps(results.run)  # plain JSON types


def test_newer_format_with_payloads_and_extra_tables(payload_run):
    s = payload_run.samples
    assert list(s["payload"].cat.categories) == ["random", "dataset:office"]
    assert "reading" in list(s["scenario"].cat.categories)
    assert list(payload_run.summary["payload"].cat.categories)[0] == "random"
    assert "payload" in payload_run.comparison.columns
    t = payload_run.tables["table1_dataset_vs_random"]
    assert list(t.columns) == ["cipher", "payload", "median_ns"] and t["median_ns"].iloc[0] == 10.5


def test_only_files_listed_in_run_json_are_read(run_dir, tmp_path):
    """A table left beside a run (e.g. by a replaced run) is not the run's."""
    d = tmp_path / "run"
    shutil.copytree(run_dir, d)
    (d / "table1_dataset_vs_random.csv").write_text("cipher,payload,median_ns\nOld,random,1\n")
    assert "table1_dataset_vs_random" not in lwcbench.load(d).tables
    run = json.loads((d / "run.json").read_text())
    run["files"] = [f for f in run["files"] if f != "summary.csv"]
    (d / "run.json").write_text(json.dumps(run))
    with pytest.raises(ResultsError, match="summary.csv is not in its 'files' list"):
        lwcbench.load(d)
    run["files"] = ["../etc/passwd.csv"]
    (d / "run.json").write_text(json.dumps(run))
    with pytest.raises(ResultsError, match="not a file of the run directory"):
        lwcbench.load(d)


@pytest.mark.parametrize(
    "name, col, value",
    [
        ("samples.csv", "ns_per_op", "inf"),
        ("samples.csv", "ns_per_op", "NaN"),
        ("samples.csv", "ns_per_op", "1e400"),
        ("samples.csv", "ns_per_op", "-3"),
        ("samples.csv", "ns_per_op", "0"),
        ("samples.csv", "ns_per_op", "2e15"),
        ("samples.csv", "cycles_per_op", "-1"),
        ("samples.csv", "batch", "0"),
        ("warmup.csv", "ns_per_op", "-inf"),
        ("summary.csv", "median_ns", "inf"),
    ],
)
def test_impossible_values_are_refused_with_file_line_column(run_dir, tmp_path, name, col, value):
    # Issue 36 item 9: a non-finite or impossible measurement is refused, as the engine's readers do.
    d = _broken(run_dir, tmp_path, _set_value(name, col, value))
    fields, _ = read_rows(d / name)
    with pytest.raises(ResultsError) as e:
        lwcbench.load(d)
    where = f"{d / name}:2:{fields.index(col) + 1}: {col} {value!r}"
    assert str(e.value).startswith(where), (where, str(e.value))
