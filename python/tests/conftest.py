"""Shared fixtures: one real (small) benchmark run, and synthetic variants of it.

The real run comes from the Rust engine through the bindings. The synthetic "twin" runs add
a C++ twin of every ChaCha20 implementation by editing the CSV files with the csv module, so
the C++/Rust figures can be drawn although the committed catalogue has no C++ code yet.
"""
import csv
import json
import shutil
from pathlib import Path

import pytest

import lwcbench

REPS, WARMUP = 3, 1


@pytest.fixture(scope="session")
def run_dir(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("runs") / "quick"
    d = lwcbench.run(preset="quick", reps=REPS, warmup=WARMUP, seed=20240607, out=out)
    return Path(d)


@pytest.fixture(scope="session")
def results(run_dir):
    return lwcbench.load(run_dir)


def read_rows(path: Path):
    with open(path, newline="", encoding="utf-8") as f:
        r = csv.DictReader(f)
        return r.fieldnames, list(r)


def write_rows(path: Path, fields, rows) -> None:
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=fields)
        w.writeheader()
        w.writerows(rows)


NS_COLS = {"ns_per_op", "mean_ns", "sd_ns", "median_ns", "min_ns", "max_ns", "p95_ns", "p99_ns", "ci95_lo_ns",
           "ci95_hi_ns", "median_ci95_lo_ns", "median_ci95_hi_ns", "ns_per_bit", "cycles_per_op", "median_cycles",
           "cycles_per_bit"}

# Hand-written comparison rows: (scenario, kiv, size_bits, ratio, verdict).
TWIN_COMPARISON = [
    ("full", "s,s", 8, 1.50, "Rust faster"),
    ("full", "r,r", 8, 0.80, "C++ faster"),
    ("full", "s,s", 1024, 1.05, "no significant difference"),
    ("keystream", "s,r", 128, 2.00, "Rust faster"),
    ("init", "s,s", 0, 0.50, "C++ faster"),
    ("init", "r,s", 0, 1.00, "no significant difference"),
]


def make_twin(src: Path, dst: Path, factor: float) -> Path:
    """Copy a run; ChaCha20 rows become 'rust-ref' plus a 'cpp-ref' copy whose times are
    multiplied by `factor`."""
    shutil.copytree(src, dst)
    for name in ("samples.csv", "warmup.csv", "summary.csv"):
        fields, rows = read_rows(dst / name)
        out = []
        for r in rows:
            if r["cipher"] != "ChaCha20":
                out.append(r)
                continue
            rust = dict(r, implementation="rust-ref")
            cpp = dict(r, implementation="cpp-ref", language="C++")
            for c in NS_COLS & set(fields):
                if cpp[c] != "":
                    cpp[c] = repr(float(cpp[c]) * factor)
            if "mbit_per_s" in fields and cpp["mbit_per_s"] != "":
                cpp["mbit_per_s"] = repr(float(cpp["mbit_per_s"]) / factor)
            out += [rust, cpp]
        write_rows(dst / name, fields, out)
    fields, _ = read_rows(dst / "comparison.csv")
    rows = [
        dict(cipher="ChaCha20", variant="ref", scenario=sc, kiv=k, size_bits=z, rust_median_ns=100.0,
             cpp_median_ns=100.0 * ratio, ratio_cpp_rust=ratio,
             mann_whitney_p=0.5 if v.startswith("no") else 1e-4, verdict=v)
        for sc, k, z, ratio, v in TWIN_COMPARISON
    ]
    write_rows(dst / "comparison.csv", fields, rows)
    return dst


@pytest.fixture(scope="session")
def twin(run_dir, tmp_path_factory):
    return lwcbench.load(make_twin(run_dir, tmp_path_factory.mktemp("twin") / "run", 1.5))


def make_payload_variant(src: Path, dst: Path) -> Path:
    """Copy a run in the newer format: a `payload` column, ChaCha20 `full` measured on a
    dataset payload too (times x 1.2), a `reading` scenario and an extra table."""
    shutil.copytree(src, dst)
    for name in ("samples.csv", "warmup.csv", "summary.csv"):
        fields, rows = read_rows(dst / name)
        i = fields.index("size_bits") + 1
        fields = fields[:i] + ["payload"] + fields[i:]
        out = []
        for r in rows:
            out.append(dict(r, payload="random"))
            if r["cipher"] == "ChaCha20" and r["scenario"] == "full":
                ds = dict(r, payload="dataset:office")
                for c in NS_COLS & set(fields):
                    if ds[c] != "":
                        ds[c] = repr(float(ds[c]) * 1.2)
                if "mbit_per_s" in fields:
                    ds["mbit_per_s"] = repr(float(ds["mbit_per_s"]) / 1.2)
                out.append(ds)
            if r["cipher"] == "ChaCha20" and r["scenario"] == "init":
                out.append(dict(r, scenario="reading", size_bits="32", payload="random"))
        write_rows(dst / name, fields, out)
    fields, _ = read_rows(dst / "comparison.csv")
    i = fields.index("size_bits") + 1
    write_rows(dst / "comparison.csv", fields[:i] + ["payload"] + fields[i:], [])
    (dst / "table1_dataset_vs_random.csv").write_text("cipher,payload,median_ns\nChaCha20,random,10.5\n")
    run = json.loads((dst / "run.json").read_text())
    run["files"].insert(0, "table1_dataset_vs_random.csv")
    (dst / "run.json").write_text(json.dumps(run))
    return dst


@pytest.fixture(scope="session")
def payload_run(run_dir, tmp_path_factory):
    return lwcbench.load(make_payload_variant(run_dir, tmp_path_factory.mktemp("payload") / "run"))
