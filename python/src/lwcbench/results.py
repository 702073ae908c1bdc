"""Load a run directory written by ``lwcbench run`` / :func:`lwcbench.run` into pandas.

Column meanings: ``docs/result-files.md`` in the repository. This module only reads the
files and gives the columns proper dtypes; every statistic comes from the Rust engine.
"""
from __future__ import annotations

import html
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, Optional, Union

import numpy as np
import pandas as pd

__all__ = ["Results", "ResultsError", "load", "load_energy", "KIV_ORDER", "SCENARIO_ORDER"]

#: Key/IV variants in the study's order, then the pooled rows of ``summary.csv``.
KIV_ORDER = ["s,s", "s,r", "r,s", "r,r", "all"]
#: Scenarios in the engine's order (stream, then block/AEAD).
SCENARIO_ORDER = ["full", "keystream", "init", "keysetup", "encrypt", "decrypt", "reading", "frame", "roundtrip"]

# dtype kinds: "cat" = categorical (categories in order of appearance), "kiv"/"scenario" =
# categorical with the fixed orders above ("payload": "random" first), "int" = nullable
# Int64, "float" = float64.
# Columns a newer engine writes ("random" or "dataset:<name>"); runs without them load too.
_OPTIONAL = {"payload"}
_GROUP = {
    "cipher": "cat",
    "implementation": "cat",
    "language": "cat",
    "family": "cat",
    "scenario": "scenario",
    "kiv": "kiv",
    "size_bits": "int",
    "payload": "payload",
}
_SAMPLE_COLS = {**_GROUP, "rep": "int", "batch": "int", "ns_per_op": "float", "cycles_per_op": "float"}
_SUMMARY_COLS = {
    **_GROUP,
    "batch": "int",
    "n": "int",
    **{c: "float" for c in (
        "mean_ns", "sd_ns", "median_ns", "min_ns", "max_ns", "p95_ns", "p99_ns",
        "ci95_lo_ns", "ci95_hi_ns", "median_ci95_lo_ns", "median_ci95_hi_ns",
    )},
    "outliers": "int",
    **{c: "float" for c in ("median_cycles", "ns_per_bit", "mbit_per_s", "cycles_per_bit")},
}
_COMPARISON_COLS = {
    "cipher": "cat",
    "variant": "cat",
    "scenario": "scenario",
    "kiv": "kiv",
    "size_bits": "int",
    "payload": "payload",
    "rust_median_ns": "float",
    "cpp_median_ns": "float",
    "ratio_cpp_rust": "float",
    "mann_whitney_p": "float",
    "verdict": "cat",
}

# Measured energy of a collected run (`lwcbench collect --power-port`, docs/power.md):
# per group and per batch. `energy_source` is the measured label ("measured:<sensor> (shunt …)").
_ENERGY_COLS = {
    **{c: _GROUP[c] for c in ("cipher", "implementation", "language", "scenario", "kiv", "size_bits", "payload")},
    "batches": "int",
    "operations": "int",
    "samples_min": "int",
    **{c: "float" for c in (
        "energy_per_op_j_measured", "energy_per_op_u_j", "energy_per_byte_j_measured", "energy_per_byte_u_j",
        "energy_per_op_j_total", "mean_power_w", "baseline_power_w",
    )},
    "energy_source": "cat",
}
_ENERGY_BATCH_COLS = {
    "batch": "int",
    "window": "int",
    **{c: _GROUP[c] for c in ("cipher", "implementation", "scenario", "kiv", "size_bits")},
    "rep": "int",
    "operations": "int",
    "samples": "int",
    **{c: "float" for c in (
        "duration_s", "mean_power_w", "baseline_power_w", "energy_j_measured", "u_random_j", "u_systematic_j",
    )},
}
_ENERGY_FILES = {"energy.csv": _ENERGY_COLS, "energy_batches.csv": _ENERGY_BATCH_COLS}

_CORE_FILES = {"samples.csv", "warmup.csv", "summary.csv", "comparison.csv"}

# What a measured value can be, as the engine's own readers (`lwcbench report`/`compare`) check
# it: (low, low included, high, empty allowed). A non-finite or impossible value is refused with
# file:line:column, never plotted.
_SAMPLE_BOUNDS = {
    "ns_per_op": (0.0, False, 1e15, False),
    "cycles_per_op": (0.0, True, 1e18, True),
    "batch": (1.0, True, float("inf"), False),
}
_SUMMARY_BOUNDS = {
    c: (float("-inf"), False, float("inf"), True)
    for c, kind in _SUMMARY_COLS.items() if kind == "float"
}


# Jupyter's table of a run: the pooled summary rows, at most this many (the rest is in .summary).
_HTML_ROWS = 60
_HTML_COLS = ["cipher", "implementation", "scenario", "size_bits", "payload", "n", "median_ns",
              "median_ci95_lo_ns", "median_ci95_hi_ns", "mbit_per_s"]
# Results.plot's kinds: the figure functions of lwcbench.plots.
_PLOT_KINDS = {"bars": "bars_ci", "box": "boxplot_time", "init": "boxplot_init", "ratio": "ratio_cpp_rust"}
_UNSIZED = ("init", "keysetup")


class ResultsError(ValueError):
    """A result file exists but is not what ``docs/result-files.md`` describes."""


@dataclass(frozen=True, eq=False)  # DataFrames have no boolean equality
class Results:
    """One run: four DataFrames and the run record.

    * ``samples`` — one row per measured sample (``samples.csv``);
    * ``warmup`` — the excluded warm-up samples (``warmup.csv``);
    * ``summary`` — per group, then pooled rows with ``kiv == "all"`` (``summary.csv``);
    * ``comparison`` — C++ against Rust twins (``comparison.csv``, may be empty);
    * ``run`` — ``run.json`` as a dict (machine, build, clock, seed, …).
    """

    path: Path
    samples: pd.DataFrame = field(repr=False)
    warmup: pd.DataFrame = field(repr=False)
    summary: pd.DataFrame = field(repr=False)
    comparison: pd.DataFrame = field(repr=False)
    run: Dict[str, Any] = field(repr=False)
    #: Any further CSV tables of the run (e.g. ``table1_dataset_vs_random``), by file stem,
    #: as plain ``pandas.read_csv`` reads them (``energy`` and ``energy_batches`` typed, as below).
    tables: Dict[str, pd.DataFrame] = field(default_factory=dict, repr=False)
    #: Measured energy of a collected run with a power logger (``energy.csv``, typed as
    #: :func:`load_energy`), else ``None``.
    energy: Optional[pd.DataFrame] = field(default=None, repr=False)
    #: Its batches (``energy_batches.csv``), else ``None``.
    energy_batches: Optional[pd.DataFrame] = field(default=None, repr=False)

    def __repr__(self) -> str:
        return (
            f"Results({str(self.path)!r}: {len(self.samples)} samples in "
            f"{self.run.get('groups', '?')} groups, preset {self.run.get('preset')!r}, "
            f"{len(self.comparison)} C++/Rust comparisons)"
        )

    def _repr_html_(self) -> str:
        """Jupyter's display of a run: what it is, then the summary rows pooled over the key/IV
        variants (``kiv == "all"``, or every row of a run with one variant) as a table, at most
        60 rows. Every value read from the files is HTML-escaped. In a notebook cell::

            res = lwcbench.load(run_dir)
            res            # the table
        """
        s = self.summary
        pooled = s[s["kiv"] == "all"] if (s["kiv"] == "all").any() else s
        cols = [c for c in _HTML_COLS if c in pooled.columns]
        if "payload" in cols and pooled["payload"].nunique(dropna=True) <= 1:
            cols.remove("payload")  # one payload: nothing to tell apart
        shown = pooled[cols].head(_HTML_ROWS)
        table = shown.to_html(index=False, escape=True, na_rep="", border=0, classes="lwcbench-results",
                              float_format=lambda v: f"{v:.4g}")
        cpu = (self.run.get("machine") or {}).get("cpu_model") or "unknown CPU"
        head = (
            f"<p><b>lwcbench run</b> <code>{html.escape(str(self.path))}</code>: preset "
            f"{html.escape(str(self.run.get('preset')))}, {len(self.samples)} samples in "
            f"{html.escape(str(self.run.get('groups', '?')))} groups, {len(self.comparison)} C++/Rust "
            f"comparisons; {html.escape(str(cpu))}. Median time per operation (ns) with its 95 % interval,"
            f" pooled over the key/IV variants.</p>"
        )
        more = ""
        if len(pooled) > _HTML_ROWS:
            more = f"<p>{len(pooled) - _HTML_ROWS} more rows: <code>.summary</code></p>"
        return f"<div>{head}{table}{more}</div>"

    def plot(self, kind: str = "bars", path: Union[None, str, "os.PathLike[str]"] = None, **options: Any):
        """One of the study's figures of this run (:mod:`lwcbench.plots`), a matplotlib
        ``Figure`` that shows inline in Jupyter (after ``%matplotlib inline``: the figures are made
        without pyplot); ``path`` also saves it (``.png``, ``.pdf``, …).

        ``kind``: ``"bars"`` (:func:`~lwcbench.plots.bars_ci`: throughput, or median time of
        ``init``/``keysetup``, with 95 % intervals), ``"box"`` (:func:`~lwcbench.plots.boxplot_time`:
        time per ``<k,iv | bits>`` group), ``"init"`` (:func:`~lwcbench.plots.boxplot_init`) or
        ``"ratio"`` (:func:`~lwcbench.plots.ratio_cpp_rust`: C++/Rust twins). ``options`` are
        that function's (``scenario``, ``cipher``, ``size_bits``, ``metric``, ``kiv``,
        ``implementations``); ``scenario`` defaults to the first one the run measured::

            res.plot()                                       # throughput bars
            res.plot("box", cipher="ChaCha20", path="box.pdf")
        """
        from . import plots  # here: plots imports this module, and matplotlib only when drawing

        if kind not in _PLOT_KINDS:
            raise ValueError(f"kind={kind!r} unknown (one of {', '.join(_PLOT_KINDS)})")
        if kind in ("bars", "box") and "scenario" not in options:
            measured = [str(x) for x in self.samples["scenario"].cat.categories
                        if (self.samples["scenario"] == x).any()]
            if not measured:
                raise ValueError(f"{self.path}: no samples to plot")
            sized = [x for x in measured if x not in _UNSIZED]
            options["scenario"] = (sized or measured)[0]
            if kind == "bars" and options["scenario"] in _UNSIZED:
                options.setdefault("metric", "median_ns")
        return getattr(plots, _PLOT_KINDS[kind])(self, path=path, **options)


def _typed(df: pd.DataFrame, spec: Dict[str, str], path: Path) -> pd.DataFrame:
    missing = [c for c in spec if c not in df.columns and c not in _OPTIONAL]
    if missing:
        raise ResultsError(
            f"{path}: required column(s) {', '.join(missing)} missing "
            f"(found: {', '.join(map(str, df.columns)) or 'none'}); see docs/result-files.md"
        )
    out = {}
    for col, kind in spec.items():
        if col not in df.columns:
            continue
        s = df[col]
        try:
            if kind == "float":
                out[col] = pd.to_numeric(s, errors="raise").astype("float64")
            elif kind == "int":
                num = pd.to_numeric(s, errors="raise")
                out[col] = num.astype("Int64")  # raises on fractional values
            else:
                text = s.map(lambda v: v if pd.isna(v) else str(v)).astype(object)
                if kind == "kiv":
                    bad = sorted(set(text.dropna()) - set(KIV_ORDER))
                    if bad:
                        raise ResultsError(f"unknown value(s) {bad} (expected one of {KIV_ORDER})")
                    out[col] = pd.Categorical(text, categories=KIV_ORDER, ordered=True)
                elif kind == "scenario":
                    # known scenarios in the engine's order; a newer engine's additions after them
                    new = [v for v in pd.unique(text.dropna()) if v not in SCENARIO_ORDER]
                    out[col] = pd.Categorical(text, categories=SCENARIO_ORDER + new)
                elif kind == "payload":
                    seen = list(pd.unique(text.dropna()))
                    cats = (["random"] if "random" in seen else []) + [v for v in seen if v != "random"]
                    out[col] = pd.Categorical(text, categories=cats)
                else:
                    out[col] = pd.Categorical(text, categories=list(pd.unique(text.dropna())))
        except ResultsError as e:
            raise ResultsError(f"{path}: column {col}: {e}") from None
        except (ValueError, TypeError) as e:
            raise ResultsError(f"{path}: column {col} is not {kind}: {e}") from None
    # Columns beyond the documented ones (a newer engine) are kept as pandas read them.
    extra = {c: df[c] for c in df.columns if c not in spec}
    return pd.DataFrame({**out, **extra}, index=df.index)


def _check_bounds(df: pd.DataFrame, path: Path, bounds: Dict[str, tuple]) -> None:
    for col, (lo, lo_in, hi, empty_ok) in bounds.items():
        if col not in df.columns:
            continue
        v = pd.to_numeric(df[col], errors="coerce").to_numpy(dtype=float)
        missing = pd.isna(df[col]).to_numpy()
        above = (v >= lo) if lo_in else (v > lo)
        ok = np.isfinite(v) & above & (v <= hi)
        if empty_ok:
            ok |= missing
        bad = np.flatnonzero(~ok)
        if bad.size:
            i = int(bad[0])
            raw = pd.read_csv(path, dtype=str, keep_default_na=False)[col].iloc[i]
            if np.isfinite(lo):
                want = f"a number {'from' if lo_in else 'above'} {lo:g}"
                want += f" and at most {hi:g}" if np.isfinite(hi) else ""
            else:
                want = "a finite number"
            raise ResultsError(f"{path}:{i + 2}:{list(df.columns).index(col) + 1}: {col} {raw[:24]!r} is not {want}")


def _read_csv(path: Path, spec: Dict[str, str], bounds: Optional[Dict[str, tuple]] = None) -> pd.DataFrame:
    if not path.is_file():
        raise FileNotFoundError(2, f"result file missing: {path} (is this an lwcbench run directory?)", str(path))
    try:
        # Text columns stay text (kiv labels such as "s,s" are quoted in the file).
        df = pd.read_csv(path, keep_default_na=True)
    except pd.errors.EmptyDataError:
        raise ResultsError(f"{path}: empty file (no header row)") from None
    except pd.errors.ParserError as e:
        raise ResultsError(f"{path}: not valid CSV: {e}") from None
    typed = _typed(df, spec, path)
    _check_bounds(typed, path, bounds or {})
    return typed


def _read_extra(path: Path) -> pd.DataFrame:
    try:
        return pd.read_csv(path)
    except (pd.errors.EmptyDataError, pd.errors.ParserError) as e:
        raise ResultsError(f"{path}: not a readable CSV table: {e}") from None


def load_energy(path: Union[str, "os.PathLike[str]"]) -> pd.DataFrame:
    """Load a collected run's ``energy.csv`` or ``energy_batches.csv`` (docs/power.md) with
    typed columns: counts as ``Int64``, energies, powers and uncertainties (k = 2, joules) as
    ``float64`` (``NaN`` where the file leaves a cell empty, e.g. per byte of ``init``), text
    as categorical. Every row of ``energy.csv`` must carry the measured label
    (``energy_source`` starting ``measured:``). A run directory means its ``energy.csv``.

    >>> lwcbench.load_energy("summary.csv")
    Traceback (most recent call last):
    lwcbench.results.ResultsError: summary.csv: not energy.csv or energy_batches.csv
    """
    p = Path(path)
    if p.is_dir():
        p = p / "energy.csv"
    spec = _ENERGY_FILES.get(p.name)
    if spec is None:
        raise ResultsError(f"{p}: not energy.csv or energy_batches.csv")
    df = _read_csv(p, spec)
    if "energy_source" in spec:
        bad = [i for i, v in enumerate(df["energy_source"]) if pd.isna(v) or not str(v).startswith("measured:")]
        if bad:
            raise ResultsError(
                f"{p}: line {bad[0] + 2}: column energy_source: {df['energy_source'].iloc[bad[0]]!r} is not a measured label ('measured:…')"
            )
    return df


def load(path: Union[str, "os.PathLike[str]"]) -> Results:
    """Load a run directory (or any file inside it) into a :class:`Results`.

    Raises ``FileNotFoundError`` naming the file if one is missing — a directory without
    ``run.json`` is an incomplete run — and :class:`ResultsError` (a ``ValueError``) naming
    the file and column if a required column is absent or holds values of the wrong type.
    A link run (:func:`lwcbench.link`) has no timing samples: its CSV files are in ``tables``.

    >>> import tempfile
    >>> d = lwcbench.run(cipher="ChaCha20", scenario="init", kiv="ss", reps=3, warmup=0, seed=1,
    ...                  out=tempfile.mkdtemp() + "/run", report=False)
    >>> r = lwcbench.load(d)
    >>> len(r.samples), r.run["seed"]
    (3, 1)
    """
    d = Path(path)
    if d.is_file():
        d = d.parent
    if not d.is_dir():
        raise FileNotFoundError(2, f"no such run directory: {d}", str(d))
    run_json = d / "run.json"
    if not run_json.is_file():
        raise FileNotFoundError(
            2, f"result file missing: {run_json} (run.json is written last: the run is incomplete or this is not a run directory)",
            str(run_json),
        )
    try:
        run = json.loads(run_json.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise ResultsError(f"{run_json}: not valid JSON: {e}") from None
    if not isinstance(run, dict):
        raise ResultsError(f"{run_json}: expected a JSON object, got {type(run).__name__}")
    # Only the files run.json lists belong to the run: anything else in the directory (a
    # replaced run's leftovers, a hand-made file) is not read.
    listed = run.get("files", [])
    if not isinstance(listed, list) or not all(isinstance(f, str) for f in listed):
        raise ResultsError(f"{run_json}: 'files' is not a list of file names")
    for f in listed:
        if f != Path(f).name or f in (".", ".."):
            raise ResultsError(f"{run_json}: 'files' names {f!r}, which is not a file of the run directory")
    for f in _CORE_FILES:
        if f not in listed and (d / f).is_file():
            raise ResultsError(f"{run_json}: {f} is not in its 'files' list (the directory mixes runs?)")
    tables = {Path(f).stem: _read_extra(d / f) for f in sorted(listed) if f.endswith(".csv") and f not in _CORE_FILES}
    energy = {f: load_energy(d / f) for f in _ENERGY_FILES if f in listed}
    tables.update({Path(f).stem: df for f, df in energy.items()})
    if "samples.csv" not in listed:
        # A link run (lwcbench link): no timing samples; its tables are in ``tables``.
        def empty(cols: Dict[str, str]) -> pd.DataFrame:
            return pd.DataFrame({c: pd.Series(dtype=object) for c in cols})

        return Results(path=d, samples=empty(_SAMPLE_COLS), warmup=empty(_SAMPLE_COLS),
                       summary=empty(_SUMMARY_COLS), comparison=empty(_COMPARISON_COLS), run=run, tables=tables,
                       energy=energy.get("energy.csv"), energy_batches=energy.get("energy_batches.csv"))
    return Results(
        path=d,
        samples=_read_csv(d / "samples.csv", _SAMPLE_COLS, _SAMPLE_BOUNDS),
        warmup=_read_csv(d / "warmup.csv", _SAMPLE_COLS, _SAMPLE_BOUNDS),
        summary=_read_csv(d / "summary.csv", _SUMMARY_COLS, _SUMMARY_BOUNDS),
        comparison=_read_csv(d / "comparison.csv", _COMPARISON_COLS),
        run=run,
        tables=tables,
        energy=energy.get("energy.csv"),
        energy_batches=energy.get("energy_batches.csv"),
    )
