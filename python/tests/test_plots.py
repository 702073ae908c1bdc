"""Every figure function writes a non-empty PNG and PDF and shows what it should."""
import dataclasses

import numpy as np
import pytest
from matplotlib.figure import Figure
from matplotlib.patches import PathPatch, Rectangle

from lwcbench import plots

from conftest import TWIN_COMPARISON

SIZES = [1, 8, 128, 1024]
KIVS = ["s,s", "s,r", "r,s", "r,r"]

FIGURES = {
    "box_full": lambda r, p: plots.boxplot_time(r, scenario="full", path=p),
    "box_keystream_one_cipher": lambda r, p: plots.boxplot_time(r, scenario="keystream", cipher="ChaCha20", path=p),
    "box_encrypt": lambda r, p: plots.boxplot_time(r, scenario="encrypt", path=p),
    "box_init": lambda r, p: plots.boxplot_init(r, path=p),
    "box_keysetup": lambda r, p: plots.boxplot_init(r, scenario="keysetup", path=p),
    "bars_throughput": lambda r, p: plots.bars_ci(r, "full", 1024, metric="mbit_per_s", path=p),
    "bars_init_median": lambda r, p: plots.bars_ci(r, "init", metric="median_ns", path=p),
    "bars_mean_one_kiv": lambda r, p: plots.bars_ci(r, "keystream", 128, metric="mean_ns", kiv="r,s", path=p),
    "ratio": lambda r, p: plots.ratio_cpp_rust(r, path=p),
}

MAGIC = {"png": b"\x89PNG\r\n\x1a\n", "pdf": b"%PDF-"}


@pytest.mark.parametrize("fmt", ["png", "pdf"])
@pytest.mark.parametrize("name", list(FIGURES))
def test_writes_png_and_pdf(twin, tmp_path, name, fmt):
    path = tmp_path / f"{name}.{fmt}"
    fig = FIGURES[name](twin, path)
    assert isinstance(fig, Figure)
    data = path.read_bytes()
    assert data.startswith(MAGIC[fmt])
    assert len(data) > 3000
    assert fig.axes[0].get_ylabel(), "y axis needs a label"
    for ax in fig.axes:
        assert ax.get_xlabel(), "x axis needs a label"


def test_real_run_figures(results, tmp_path):
    # the unedited run: one implementation per cipher
    plots.boxplot_time(results, path=tmp_path / "a.png")
    plots.bars_ci(results, "encrypt", path=tmp_path / "b.pdf")
    assert (tmp_path / "a.png").stat().st_size > 3000
    assert (tmp_path / "b.pdf").stat().st_size > 3000


def test_box_axis_labels_follow_the_study(results):
    fig = plots.boxplot_time(results, scenario="full", cipher="ChaCha20")
    labels = [t.get_text() for t in fig.axes[0].get_xticklabels()]
    assert labels == [f"<{k} | {s}>" for s in SIZES for k in KIVS]
    assert "<r,s | 8>" in labels
    fig = plots.boxplot_init(results, cipher="ChaCha20")
    assert [t.get_text() for t in fig.axes[0].get_xticklabels()] == ["<s,s>", "<s,r>", "<r,s>", "<r,r>"]


def test_box_implementations_side_by_side(twin):
    fig = plots.boxplot_time(twin, scenario="full", cipher="ChaCha20")
    ax = fig.axes[0]
    boxes = [p for p in ax.patches if isinstance(p, PathPatch)]
    assert len(boxes) == 2 * len(SIZES) * len(KIVS)
    colors = {tuple(np.round(b.get_facecolor()[:3], 3)) for b in boxes}
    assert len(colors) == 2
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert any("cpp-ref" in t and "C++" in t for t in legend)
    assert any("rust-ref" in t and "Rust" in t for t in legend)
    # colours from the Okabe-Ito palette
    okabe = {tuple(np.round(int(h[i:i + 2], 16) / 255, 3) for i in (1, 3, 5)) for h in plots.OKABE_ITO}
    assert colors <= okabe


def test_log_scale_when_values_span_decades(twin):
    # deterministic times instead of measured ones (a noisy sample can span decades)
    df = twin.samples.copy()
    size = df["size_bits"].astype(float)
    narrow = dataclasses.replace(twin, samples=df.assign(ns_per_op=100.0 + size / 20 + df["rep"].astype(float)))
    wide = dataclasses.replace(twin, samples=df.assign(ns_per_op=10.0 * size + 5.0))
    assert plots.boxplot_time(wide, scenario="full", cipher="ChaCha20").axes[0].get_yscale() == "log"
    ax = plots.boxplot_time(narrow, scenario="full", cipher="ChaCha20").axes[0]
    assert ax.get_yscale() == "linear" and ax.get_ylim()[0] == 0


def test_bars_show_pooled_median_throughput(results):
    fig = plots.bars_ci(results, "full", 1024, metric="mbit_per_s")
    bars = [p for p in fig.axes[0].patches if isinstance(p, Rectangle) and p.get_height() > 0]
    s = results.samples
    d = s[(s["cipher"] == "ChaCha20") & (s["scenario"] == "full") & (s["size_bits"] == 1024)]
    impls = sorted(d["implementation"].astype(str).unique())
    assert len(bars) == len(impls)
    want = sorted(1024 / d[d["implementation"] == i]["ns_per_op"].median() * 1000 for i in impls)
    np.testing.assert_allclose(sorted(b.get_height() for b in bars), want, rtol=1e-9)


def test_ratio_bars_match_comparison(twin):
    fig = plots.ratio_cpp_rust(twin)
    by_title = {ax.get_title(loc="left"): ax for ax in fig.axes}
    assert set(by_title) == {sc for sc, *_ in TWIN_COMPARISON}
    for sc, ax in by_title.items():
        rows = [r for r in TWIN_COMPARISON if r[0] == sc]
        bars = [p for p in ax.patches if isinstance(p, Rectangle)]
        assert len(bars) == len(rows)
        tops = sorted(b.get_y() + b.get_height() for b in bars)
        np.testing.assert_allclose(tops, sorted(r[3] for r in rows), rtol=1e-12)
        hollow = sum(1 for b in bars if b.get_facecolor()[3] == 0)
        assert hollow == sum(1 for r in rows if r[4].startswith("no"))
        assert ax.get_yscale() == "log"


def test_errors_are_clear(results):
    with pytest.raises(ValueError, match="scenario 'nonsense'"):
        plots.boxplot_time(results, scenario="nonsense")
    with pytest.raises(ValueError, match="comparison.csv is empty"):
        plots.ratio_cpp_rust(results)
    with pytest.raises(ValueError, match="needs a payload"):
        plots.bars_ci(results, "init", metric="mbit_per_s")
    with pytest.raises(ValueError, match="size_bits=7"):
        plots.bars_ci(results, "full", 7)
    with pytest.raises(ValueError, match="NoSuch"):
        plots.boxplot_time(results, cipher="NoSuch")


def test_all_figures(twin, tmp_path):
    paths = plots.all_figures(twin, tmp_path / "figs")
    names = {p.name for p in paths}
    for expected in ("box-full-ChaCha20.png", "box-init-ChaCha20.pdf", "bars-full-throughput.png",
                     "bars-init-median.pdf", "ratio-cpp-rust.png", "ratio-cpp-rust.pdf",
                     "box-encrypt-ChaCha20-Poly1305.png"):
        assert expected in names, expected
    for p in paths:
        assert p.is_file() and p.stat().st_size > 3000, p
        assert p.read_bytes().startswith(MAGIC[p.suffix[1:]])


def test_payload_kinds_get_their_own_boxes_and_bars(payload_run, tmp_path):
    fig = plots.boxplot_time(payload_run, scenario="full", cipher="ChaCha20")
    ax = fig.axes[0]
    boxes = [p for p in ax.patches if isinstance(p, PathPatch)]
    n_impl = payload_run.samples.query("cipher == 'ChaCha20'")["implementation"].nunique()
    assert len(boxes) == 2 * n_impl * len(SIZES) * len(KIVS)
    assert sum(1 for b in boxes if b.get_hatch()) == n_impl * len(SIZES) * len(KIVS)
    assert any("dataset:office" in t.get_text() for t in ax.get_legend().get_texts())
    fig = plots.bars_ci(payload_run, "full", 1024, cipher="ChaCha20")
    bars = [p for p in fig.axes[0].patches if isinstance(p, Rectangle) and p.get_height() > 0]
    assert len(bars) == 2 * n_impl
    paths = plots.all_figures(payload_run, tmp_path / "figs", formats=("png",))
    assert any(p.name.startswith("box-reading-") for p in paths)
