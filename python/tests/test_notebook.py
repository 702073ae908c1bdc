"""Notebook habits (issue #42 item 4): a run renders as an HTML table, plots the study's figures,
and the example notebook docs/example.ipynb executes end to end."""
import dataclasses
from html.parser import HTMLParser
from pathlib import Path

import pytest
from matplotlib.figure import Figure

from conftest import read_rows

NOTEBOOK = Path(__file__).resolve().parents[2] / "docs" / "example.ipynb"


class _Cells(HTMLParser):
    """The text of every <th>/<td> of an HTML table, row by row."""

    def __init__(self):
        super().__init__()
        self.rows, self._cell = [], None

    def handle_starttag(self, tag, attrs):
        if tag == "tr":
            self.rows.append([])
        elif tag in ("td", "th"):
            self._cell = ""

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None:
            self.rows[-1].append(self._cell.strip())
            self._cell = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell += data


def table(html: str):
    p = _Cells()
    p.feed(html)
    return p.rows


def test_repr_html_is_the_pooled_summary(results, run_dir):
    rows = table(results._repr_html_())
    header, body = rows[0], rows[1:]
    assert header[:4] == ["cipher", "implementation", "scenario", "size_bits"]
    # expected rows from summary.csv through the csv module, not through the loader
    _, summary = read_rows(run_dir / "summary.csv")
    pooled = [r for r in summary if r["kiv"] == "all"]
    assert len(pooled) > 1
    want = pooled[:60]
    assert len(body) == len(want)
    i_med = header.index("median_ns")
    for got, r in zip(body, want):
        assert got[:3] == [r["cipher"], r["implementation"], r["scenario"]]
        assert float(got[i_med]) == pytest.approx(float(r["median_ns"]), rel=1e-3)


def test_repr_html_escapes_what_the_files_say(results):
    s = results.summary.copy()
    s["cipher"] = s["cipher"].cat.add_categories(["<script>alert(1)</script>"])
    s.loc[s.index[s["kiv"] == "all"][0], "cipher"] = "<script>alert(1)</script>"
    doctored = dataclasses.replace(results, summary=s, run={**results.run, "preset": "<b>x</b>"})
    html = doctored._repr_html_()
    assert "<script>" not in html and "<b>x</b>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html and "&lt;b&gt;x&lt;/b&gt;" in html


def test_repr_html_stops_at_sixty_rows(results):
    s = results.summary
    big = s[s["kiv"] == "all"]
    many = big.loc[big.index.repeat(70 // len(big) + 1)].reset_index(drop=True)
    html = dataclasses.replace(results, summary=many)._repr_html_()
    assert len(table(html)) == 1 + 60
    assert f"{len(many) - 60} more rows" in html


def test_plot_draws_the_study_figures(results, tmp_path):
    fig = results.plot()
    assert isinstance(fig, Figure)
    # bars of the first sized scenario the quick preset measures
    first = next(x for x in ["full", "keystream", "encrypt"] if (results.samples["scenario"] == x).any())
    assert fig.axes[0].get_title(loc="left").startswith(f"{first}: ")
    fig = results.plot("box", cipher="ChaCha20", path=tmp_path / "box.png")
    assert (tmp_path / "box.png").read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
    labels = [t.get_text() for t in fig.axes[0].get_xticklabels()]
    assert "<r,s | 8>" in labels
    fig = results.plot("init", cipher="ChaCha20")
    assert [t.get_text() for t in fig.axes[0].get_xticklabels()] == ["<s,s>", "<s,r>", "<r,s>", "<r,r>"]


def test_plot_refuses_an_unknown_kind(results):
    with pytest.raises(ValueError, match=r"kind='pie' unknown \(one of bars, box, init, ratio\)"):
        results.plot("pie")


def test_example_notebook_executes(tmp_path):
    nbformat = pytest.importorskip("nbformat", reason="scripts/setup.sh --test installs nbclient")
    nbclient = pytest.importorskip("nbclient", reason="scripts/setup.sh --test installs nbclient")
    nb = nbformat.read(NOTEBOOK, as_version=4)
    assert all(not c.get("outputs") for c in nb.cells if c.cell_type == "code"), "commit the notebook without outputs"
    # cwd outside the checkout: the notebook writes only into its own temporary directory
    nbclient.NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    errors = [o for o in outputs if o.output_type == "error"]
    assert not errors, errors[0]["evalue"] if errors else ""
    assert any("<table" in o.get("data", {}).get("text/html", "") and "lwcbench run" in o["data"]["text/html"]
               for o in outputs), "the run shows as a table"
    assert sum("image/png" in o.get("data", {}) for o in outputs) >= 2, "both figures show"
    assert list(tmp_path.iterdir()) == [], "the notebook wrote into its working directory"
