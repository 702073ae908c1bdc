"""Publication figures from a loaded run (:func:`lwcbench.load`).

Every function returns a :class:`matplotlib.figure.Figure` and, when ``path`` is given, saves
it (format from the suffix: ``.png``, ``.pdf``, ``.svg``, …). Figures are created without
pyplot, so nothing here changes the user's backend or needs a display; they render with the
Agg canvas and show inline in Jupyter.

Conventions: Okabe–Ito colour-blind-safe palette, one colour per implementation, labelled
axes with units, logarithmic y axis when the values span more than two decades.
"""
from __future__ import annotations

import functools
import math
import os
import re
import warnings
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Sequence, Tuple, Union

import matplotlib
import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.ticker import FuncFormatter, NullFormatter

from .results import KIV_ORDER, Results

__all__ = [
    "OKABE_ITO", "boxplot_time", "boxplot_init", "bars_ci", "ratio_cpp_rust", "all_figures",

]

#: Okabe & Ito (2008) colour-blind-safe palette, in their order; black last.
OKABE_ITO = ["#E69F00", "#56B4E9", "#009E73", "#F0E442", "#0072B2", "#D55E00", "#CC79A7", "#000000"]

PathLike = Union[str, "os.PathLike[str]"]

_STYLE = {
    "font.size": 9,
    "axes.titlesize": 10,
    "axes.labelsize": 9,
    "legend.fontsize": 8,
    "xtick.labelsize": 8,
    "ytick.labelsize": 8,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "axes.grid.axis": "y",
    "grid.alpha": 0.3,
    "grid.linewidth": 0.5,
    "savefig.dpi": 300,
    "pdf.fonttype": 42,  # TrueType in PDFs: editable text, accepted by publishers
    "ps.fonttype": 42,
}

_METRICS = {
    # metric: (summary column, CI columns, axis label, uses payload size)
    "mbit_per_s": ("mbit_per_s", None, "Throughput (Mbit/s)", True),
    "median_ns": ("median_ns", ("median_ci95_lo_ns", "median_ci95_hi_ns"), "Median time per operation (ns)", False),
    "mean_ns": ("mean_ns", ("ci95_lo_ns", "ci95_hi_ns"), "Mean time per operation (ns)", False),
    "ns_per_bit": ("ns_per_bit", None, "Time per bit (ns/bit)", True),
}
_METRIC_ALIASES = {"throughput": "mbit_per_s", "time": "median_ns", "median": "median_ns", "mean": "mean_ns"}


# --------------------------------------------------------------------------------------------
# helpers


def _twin_key(impl: str) -> Tuple[str, int]:
    """Sort key putting twins together, Rust before C++: rust-ref, cpp-ref, rust-fast, …"""
    m = re.match(r"^(rust|cpp)-(.+)$", impl)
    return (m.group(2), 0 if m.group(1) == "rust" else 1) if m else (impl, 2)


def _colors(res: Results) -> Dict[str, str]:
    """One stable colour per implementation across every figure of a run: C++/Rust twins
    (cpp-X / rust-X) get the warm (C++) and cool (Rust) Okabe-Ito hues, pair by pair; other
    implementations the remaining colours."""
    impls: List[str] = []
    for df in (res.summary, res.samples):
        if "implementation" in df:
            for i in df["implementation"].astype(object).dropna().unique():
                if str(i) not in impls:
                    impls.append(str(i))
    warm, cool = ["#E69F00", "#D55E00"], ["#56B4E9", "#0072B2"]
    variants = sorted({i[4:] for i in impls if i.startswith("cpp-") and "rust-" + i[4:] in impls})
    out: Dict[str, str] = {}
    for n, v in enumerate(variants[: len(warm)]):
        out["cpp-" + v], out["rust-" + v] = warm[n], cool[n]
    rest = [c for c in OKABE_ITO if c not in out.values()]
    for n, i in enumerate(sorted((i for i in impls if i not in out), key=_twin_key)):
        out[i] = rest[n % len(rest)]
    return out


def _styled(fn):
    """Run a figure function under the house style: rcParams apply when artists are made."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        with matplotlib.rc_context(_STYLE):
            return fn(*args, **kwargs)
    return wrapper


def _figure(width: float, height: float) -> Figure:
    return Figure(figsize=(width, height))


def _legend_width(chars: int) -> float:
    """Inches a legend outside the axes needs for labels of `chars` characters (8 pt)."""
    return 0.6 + 0.065 * chars


def _finish(fig: Figure, path: Optional[PathLike]) -> Figure:
    with matplotlib.rc_context(_STYLE), warnings.catch_warnings():
        # The legends sit outside the axes; saving with bbox_inches="tight" keeps them in
        # view even where tight_layout gives up on a narrow figure.
        warnings.filterwarnings("ignore", message="Tight layout not applied")
        fig.tight_layout()
        if path is not None:
            p = Path(path)
            if not p.suffix:
                raise ValueError(f"{p}: give a file suffix (.png, .pdf, .svg) to choose the format")
            p.parent.mkdir(parents=True, exist_ok=True)
            fig.savefig(p, bbox_inches="tight")
    return fig


def _log_if_wide(ax, values: Iterable[float], base: float = 10) -> None:
    """Log y axis when values span more than two decades; else a linear axis from zero."""
    v = np.asarray([x for x in values if x is not None and np.isfinite(x) and x > 0], dtype=float)
    if v.size and v.max() / v.min() > 100:
        ax.set_yscale("log", base=base)
    else:
        ax.set_ylim(bottom=0)


def _subtitle(res: Results) -> str:
    m = res.run.get("machine") or {}
    cpu = m.get("cpu_model") or "unknown CPU"
    parts = [cpu, f"{res.run.get('reps', '?')} samples per group"]
    if res.run.get("warmup"):
        parts.append(f"{res.run['warmup']} warm-up excluded")
    return "; ".join(parts)


def _pick(df: pd.DataFrame, col: str, value) -> pd.DataFrame:
    if value is None:
        return df
    vals = [value] if isinstance(value, str) else list(value)
    known = [str(x) for x in df[col].astype(object).dropna().unique()]
    want = {v.lower() for v in vals}
    missing = [v for v in vals if v.lower() not in {k.lower() for k in known}]
    if missing:
        raise ValueError(f"{col} {missing} not in this run (present: {', '.join(known) or 'none'})")
    return df[df[col].astype(object).map(lambda x: str(x).lower() in want)]


def _present(df: pd.DataFrame, col: str) -> List[str]:
    """Values of a categorical column that occur, in category order."""
    s = df[col]
    if isinstance(s.dtype, pd.CategoricalDtype):
        return [str(c) for c in s.cat.categories if (s == c).any()]
    return [str(x) for x in pd.unique(s.dropna())]


def _slug(s: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", s).strip("_")


def _impl_label(res: Results, impl: str) -> str:
    lang = res.samples.loc[res.samples["implementation"] == impl, "language"]
    return f"{impl} ({lang.iloc[0]})" if len(lang) else impl


# A series is what gets its own box/bar within one x position: an implementation, or an
# implementation x payload kind when the data hold more than one payload (dataset vs random).
Series = Tuple[str, Optional[str]]


def _series(df: pd.DataFrame) -> List[Series]:
    impls = sorted(_present(df, "implementation"), key=_twin_key)
    payloads = _present(df, "payload") if "payload" in df else []
    if len(payloads) <= 1:
        return [(i, None) for i in impls]
    return [(i, p) for i in impls for p in payloads
            if ((df["implementation"] == i) & (df["payload"] == p)).any()]


def _in_series(df: pd.DataFrame, s: Series) -> pd.Series:
    m = df["implementation"] == s[0]
    if s[1] is not None:
        m &= df["payload"] == s[1]
    return m


def _series_label(res: Results, s: Series) -> str:
    return _impl_label(res, s[0]) + (f", {s[1]} payload" if s[1] is not None else "")


def _hatch(s: Series) -> Optional[str]:
    """Non-random payloads (datasets) hatched, so colour stays the implementation's."""
    return "///" if s[1] is not None and s[1] != "random" else None


# --------------------------------------------------------------------------------------------
# box plots


def _boxplot(res: Results, scenario: str, cipher, implementations, path, with_size: bool, title: str) -> Figure:
    df = res.samples[res.samples["scenario"] == scenario]
    if df.empty:
        have = ", ".join(_present(res.samples, "scenario")) or "none"
        raise ValueError(f"no samples for scenario '{scenario}' in {res.path} (scenarios present: {have})")
    df = _pick(df, "cipher", cipher)
    df = _pick(df, "implementation", implementations)
    if df.empty:
        raise ValueError(f"no samples for scenario '{scenario}' with cipher={cipher!r}, implementations={implementations!r}")
    colors = _colors(res)
    ciphers = _present(df, "cipher")
    kivs = [k for k in KIV_ORDER if (df["kiv"] == k).any()]
    fig = None
    for row, c in enumerate(ciphers):
        d = df[df["cipher"] == c]
        impls = _series(d)
        # x positions: size-major, key/IV-minor, as the study's <k,iv | bits> axis.
        sizes = sorted(int(s) for s in d["size_bits"].dropna().unique()) if with_size else [None]
        xs: List[Tuple[str, Optional[int]]] = [(k, s) for s in sizes for k in kivs
                                               if ((d["kiv"] == k) & ((d["size_bits"] == s) if s is not None else True)).any()]
        if fig is None:
            longest = max((len(_series_label(res, x)) for x in _series(df)), default=10)
            width = min(max(3.0, 0.36 * len(xs) * (1 + 0.35 * (max(1, len(impls)) - 1)) + 1.2) + _legend_width(longest), 16)
            fig = _figure(width, 2.9 * len(ciphers))
        ax = fig.add_subplot(len(ciphers), 1, row + 1)
        w = 0.8 / max(1, len(impls))
        values_all: List[float] = []
        for j, ser in enumerate(impls):
            impl = ser[0]
            di = d[_in_series(d, ser)]
            data, pos = [], []
            for i, (k, s) in enumerate(xs):
                m = di["kiv"] == k
                if s is not None:
                    m &= di["size_bits"] == s
                v = di.loc[m, "ns_per_op"].to_numpy(dtype=float)
                if v.size:
                    data.append(v)
                    pos.append(i + (j - (len(impls) - 1) / 2) * w)
                    values_all.extend(v)
            if not data:
                continue
            bp = ax.boxplot(
                data, positions=pos, widths=w * 0.85, patch_artist=True, manage_ticks=False,
                boxprops=dict(facecolor=colors[impl], alpha=0.85, linewidth=0.6),
                medianprops=dict(color="black", linewidth=1.0),
                whiskerprops=dict(linewidth=0.6), capprops=dict(linewidth=0.6),
                flierprops=dict(marker="o", markersize=2, markerfacecolor=colors[impl], markeredgewidth=0, alpha=0.6),
            )
            if _hatch(ser):
                for b in bp["boxes"]:
                    b.set_hatch(_hatch(ser))
        ax.set_xticks(range(len(xs)))
        labels = [f"<{k} | {s}>" if s is not None else f"<{k}>" for k, s in xs]
        ax.set_xticklabels(labels, rotation=45 if with_size and len(xs) > 6 else 0, ha="right" if with_size and len(xs) > 6 else "center")
        ax.set_xlim(-0.6, len(xs) - 0.4)
        if with_size and len(sizes) > 1:
            # faint separators between payload sizes
            n_per = [sum(1 for k, s in xs if s == z) for z in sizes]
            edge = -0.5
            for n in n_per[:-1]:
                edge += n
                ax.axvline(edge, color="0.8", linewidth=0.6, zorder=0)
        _log_if_wide(ax, values_all)
        ax.set_ylabel("Time per operation (ns)")
        ax.set_xlabel("<key, IV | payload bits>" if with_size else "<key, IV>  (s = static, r = random)")
        ax.set_title(f"{c} — {title}", loc="left")
        ax.legend(handles=[Patch(facecolor=colors[i[0]], hatch=_hatch(i), label=_series_label(res, i)) for i in impls],
                  title="implementation", frameon=False, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    fig.text(0.0, 0.0, _subtitle(res), fontsize=7, color="0.35", ha="left", va="bottom")
    return _finish(fig, path)


@_styled
def boxplot_time(res: Results, scenario: str = "full", cipher=None, path: Optional[PathLike] = None,
                 implementations=None) -> Figure:
    """Box plots of time per operation for every ``<k,iv | bits>`` group of a sized scenario
    (``full``, ``keystream``, ``encrypt``, ``decrypt``, ``reading``), implementations side by side; one
    panel per cipher unless ``cipher`` picks one (or a list). Boxes: quartiles, whiskers
    1.5 IQR, dots: samples beyond (kept in every statistic)."""
    if scenario in ("init", "keysetup"):
        return boxplot_init(res, cipher=cipher, path=path, scenario=scenario, implementations=implementations)
    what = {"full": "keystream + XOR", "keystream": "keystream generation", "encrypt": "encryption",
            "decrypt": "decryption", "reading": "one 32-bit reading, counter IV"}.get(scenario, scenario)
    return _boxplot(res, scenario, cipher, implementations, path, True, f"{scenario} ({what})")


@_styled
def boxplot_init(res: Results, cipher=None, path: Optional[PathLike] = None, scenario: Optional[str] = None,
                 implementations=None) -> Figure:
    """Box plots of initialisation time per ``<k,iv>`` variant: ``init`` (key + IV setup of a
    stream cipher) or, for block ciphers and AEADs, ``keysetup``. Default: ``init`` if the
    run measured it, else ``keysetup``."""
    if scenario is None:
        scenario = "init" if (res.samples["scenario"] == "init").any() else "keysetup"
    what = {"init": "key/IV setup", "keysetup": "key schedule"}.get(scenario, scenario)
    return _boxplot(res, scenario, cipher, implementations, path, False, f"{scenario} ({what})")


# --------------------------------------------------------------------------------------------
# bars with confidence intervals


@_styled
def bars_ci(res: Results, scenario: str = "full", size_bits: Optional[int] = None, metric: str = "mbit_per_s",
            path: Optional[PathLike] = None, kiv: str = "all", cipher=None) -> Figure:
    """Bars per cipher and implementation with 95 % confidence intervals from ``summary.csv``.

    ``metric``: ``mbit_per_s`` (throughput; CI from the distribution-free CI of the median),
    ``median_ns`` (CI of the median), ``mean_ns`` (Student-t CI of the mean) or
    ``ns_per_bit``. ``kiv="all"`` uses the rows pooled over the key/IV variants (or the single
    variant if only one was measured). ``size_bits=None`` takes the largest size measured.
    """
    metric = _METRIC_ALIASES.get(metric, metric)
    if metric not in _METRICS:
        raise ValueError(f"metric '{metric}' unknown (one of {', '.join(list(_METRICS) + list(_METRIC_ALIASES))})")
    col, ci_cols, ylabel, per_size = _METRICS[metric]
    s = res.summary[res.summary["scenario"] == scenario]
    if s.empty:
        raise ValueError(f"no summary rows for scenario '{scenario}' in {res.path}")
    if per_size and scenario in ("init", "keysetup"):
        raise ValueError(f"metric '{metric}' needs a payload; '{scenario}' has none: use metric='median_ns'")
    s = _pick(s, "cipher", cipher)
    if kiv == "all" and not (s["kiv"] == "all").any():
        kivs = _present(s, "kiv")
        if len(kivs) != 1:
            raise ValueError(f"no pooled rows; pick kiv from {kivs}")
        kiv = kivs[0]
    s = s[s["kiv"] == kiv]
    if scenario not in ("init", "keysetup"):
        sizes = sorted(int(x) for x in s["size_bits"].dropna().unique())
        if size_bits is None:
            size_bits = sizes[-1]
        if size_bits not in sizes:
            raise ValueError(f"size_bits={size_bits} not measured for '{scenario}' (sizes: {sizes})")
        s = s[s["size_bits"] == size_bits]
    colors = _colors(res)
    ciphers = _present(s, "cipher")
    n_bars = sum(len(_series(s[s["cipher"] == c])) for c in ciphers)
    longest = max((len(_series_label(res, x)) for c in ciphers for x in _series(s[s["cipher"] == c])), default=10)
    fig = _figure(min(max(3.4, 0.45 * n_bars + 0.6 * len(ciphers) + 1.4) + _legend_width(longest), 16), 3.2)
    ax = fig.add_subplot(1, 1, 1)
    x0, centers, seen, vals = 0.0, [], [], []
    for c in ciphers:
        d = s[s["cipher"] == c]
        impls = _series(d)
        for j, ser in enumerate(impls):
            impl = ser[0]
            r = d[_in_series(d, ser)].iloc[0]
            v = float(r[col])
            if metric == "mbit_per_s":
                # throughput = size / median time: the median's CI maps through the same
                # monotone function (bounds swap).
                lo, hi = size_bits / r["median_ci95_hi_ns"] * 1000.0, size_bits / r["median_ci95_lo_ns"] * 1000.0
            elif metric == "ns_per_bit":
                lo, hi = r["median_ci95_lo_ns"] / size_bits, r["median_ci95_hi_ns"] / size_bits
            else:
                lo, hi = float(r[ci_cols[0]]), float(r[ci_cols[1]])
            err = np.array([[max(v - lo, 0.0)], [max(hi - v, 0.0)]])
            ax.bar(x0 + j, v, width=0.8, color=colors[impl], edgecolor="black", linewidth=0.5, hatch=_hatch(ser),
                   label=_series_label(res, ser) if ser not in seen else None)
            ax.errorbar(x0 + j, v, yerr=err, fmt="none", ecolor="black", elinewidth=0.8, capsize=3)
            vals.extend([v, lo, hi])
            seen.append(ser)
        centers.append(x0 + (len(impls) - 1) / 2)
        x0 += len(impls) + 0.8
    ax.set_xticks(centers)
    ax.set_xticklabels(ciphers)
    last = x0 - 1.8  # position of the last bar
    pad = max(0.0, (3.0 - (last + 1.2)) / 2)  # keep lone bars from filling the axis
    ax.set_xlim(-0.6 - pad, last + 0.6 + pad)
    _log_if_wide(ax, vals)
    ax.set_ylabel(ylabel)
    ax.set_xlabel("cipher")
    where = f"{size_bits}-bit payload" if scenario not in ("init", "keysetup") else "no payload"
    variant = "pooled over <k,iv>" if kiv == "all" else f"<{kiv}>"
    ax.set_title(f"{scenario}: {where}, {variant}; error bars: 95 % CI", loc="left")
    ax.legend(title="implementation", frameon=False, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    fig.text(0.0, 0.0, _subtitle(res), fontsize=7, color="0.35", ha="left", va="bottom")
    return _finish(fig, path)


# --------------------------------------------------------------------------------------------
# C++ / Rust ratio


@_styled
def ratio_cpp_rust(res: Results, scenario=None, cipher=None, path: Optional[PathLike] = None) -> Figure:
    """Ratio of median times C++ / Rust for every twin pair in ``comparison.csv``, one panel
    per scenario. Above 1: C++ slower. Filled bars differ significantly (Mann–Whitney U,
    Bonferroni-corrected α = 0.05, the engine's verdict); hollow bars do not."""
    cmp = res.comparison
    if cmp.empty:
        raise ValueError(f"{res.path}: comparison.csv is empty: no C++/Rust twin implementations (cpp-X and rust-X) were measured")
    cmp = _pick(cmp, "cipher", cipher)
    cmp = _pick(cmp, "scenario", scenario)
    scenarios = _present(cmp, "scenario")
    pairs = [(str(c), str(v)) for c, v in cmp[["cipher", "variant"]].astype(object).drop_duplicates().itertuples(index=False)]
    # pairs are not implementations: hues unused for C++ (warm) and Rust (cool) elsewhere
    pair_colors = ["#009E73", "#CC79A7", "#000000", "#F0E442"]
    pal = {p: pair_colors[i % len(pair_colors)] for i, p in enumerate(pairs)}
    kcols = ["kiv", "size_bits"] + (["payload"] if "payload" in cmp else [])
    widest = max(len(cmp[cmp["scenario"] == sc][kcols].drop_duplicates()) for sc in scenarios)
    # narrow panels side by side; panels with many bars one under the other
    ncols = min(len(scenarios), 3 if widest * len(pairs) <= 8 else 1)
    nrows = math.ceil(len(scenarios) / ncols)
    fig = _figure(min(max(3.6, max(2.4, 0.5 * widest * len(pairs) + 1.2) * ncols + 2.5), 16), 3.2 * nrows)
    ratios = cmp["ratio_cpp_rust"].to_numpy(dtype=float)
    finite = ratios[np.isfinite(ratios) & (ratios > 0)]
    span = max(2.0, float(np.max(np.abs(np.log2(finite)))) * 1.15 if finite.size else 2.0)
    for n, sc in enumerate(scenarios):
        ax = fig.add_subplot(nrows, ncols, n + 1)
        d = cmp[cmp["scenario"] == sc]
        pay = d["payload"].astype(object) if "payload" in d else pd.Series([None] * len(d), index=d.index)
        several = pay.nunique() > 1
        keys = sorted({(int(z) if pd.notna(z) else 0, str(k), (str(p) if several else None))
                       for z, k, p in zip(d["size_bits"].astype(object), d["kiv"].astype(object), pay)},
                      key=lambda t: (t[0], KIV_ORDER.index(t[1]) if t[1] in KIV_ORDER else 99, t[2] or ""))
        w = 0.8 / max(1, len(pairs))
        for j, p in enumerate(pairs):
            dp = d[(d["cipher"] == p[0]) & (d["variant"] == p[1])]
            for i, (z, k, pl) in enumerate(keys):
                r = dp[(dp["kiv"] == k) & (dp["size_bits"].fillna(0) == z)]
                if pl is not None:
                    r = r[r["payload"] == pl]
                if r.empty:
                    continue
                ratio = float(r["ratio_cpp_rust"].iloc[0])
                significant = str(r["verdict"].iloc[0]) != "no significant difference"
                ax.bar(i + (j - (len(pairs) - 1) / 2) * w, ratio - 1.0, bottom=1.0, width=w * 0.9,
                       color=pal[p] if significant else "none", edgecolor=pal[p], linewidth=1.0)
        ax.axhline(1.0, color="black", linewidth=0.8)
        ax.set_yscale("log", base=2)
        ax.set_ylim(2 ** -span, 2 ** span)
        ax.set_xticks(range(len(keys)))
        sized = sc not in ("init", "keysetup")
        tilt = sized and len(keys) > 1
        ax.set_xticklabels([(f"<{k} | {z}>" if sized else f"<{k}>") + (f" {pl}" if pl else "") for z, k, pl in keys],
                           rotation=45 if tilt else 0,
                           ha="right" if tilt else "center")
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        ax.yaxis.set_minor_formatter(NullFormatter())
        if n % ncols == 0:
            ax.set_ylabel("C++ / Rust median time (ratio)")
        ax.set_xlabel("<key, IV | payload bits>" if sized else "<key, IV>")
        ax.set_title(sc, loc="left")
    handles = [Patch(facecolor=pal[p], edgecolor=pal[p], label=f"{p[0]} {p[1]}") for p in pairs]
    handles += [Patch(facecolor="0.5", edgecolor="0.5", label="significant (α = 0.05, Bonferroni)"),
                Patch(facecolor="none", edgecolor="0.5", label="not significant"),
                Line2D([], [], color="black", linewidth=0.8, label="equal speed; above: C++ slower")]
    fig.axes[ncols - 1].legend(handles=handles, frameon=False, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    fig.text(0.0, 0.0, _subtitle(res), fontsize=7, color="0.35", ha="left", va="bottom")
    return _finish(fig, path)


# --------------------------------------------------------------------------------------------


def all_figures(res: Results, outdir: PathLike, formats: Sequence[str] = ("png", "pdf")) -> List[Path]:
    """Write every figure that applies to this run into ``outdir`` and return the paths.

    Per cipher and sized scenario a box plot; per cipher an initialisation box plot; per
    sized scenario throughput bars at the largest size; median-time bars for init/keysetup;
    the C++/Rust ratio chart when the run has twin pairs.
    """
    out = Path(outdir)
    out.mkdir(parents=True, exist_ok=True)
    written: List[Path] = []

    def save(fig_fn, name: str, *args, **kwargs) -> None:
        fig = None
        for fmt in formats:
            p = out / f"{name}.{fmt.lstrip('.')}"
            if fig is None:
                fig = fig_fn(res, *args, path=p, **kwargs)
            else:
                _finish(fig, p)
            written.append(p)

    s = res.samples
    for c in _present(s, "cipher"):
        sc_c = _present(s[s["cipher"] == c], "scenario")
        for sc in sc_c:
            if sc in ("init", "keysetup"):
                save(boxplot_init, f"box-{sc}-{_slug(c)}", cipher=c, scenario=sc)
            else:
                save(boxplot_time, f"box-{sc}-{_slug(c)}", scenario=sc, cipher=c)
    for sc in _present(s, "scenario"):
        if sc in ("init", "keysetup"):
            save(bars_ci, f"bars-{sc}-median", scenario=sc, metric="median_ns")
        else:
            save(bars_ci, f"bars-{sc}-throughput", scenario=sc, metric="mbit_per_s")
    if not res.comparison.empty:
        save(ratio_cpp_rust, "ratio-cpp-rust")
    return written
