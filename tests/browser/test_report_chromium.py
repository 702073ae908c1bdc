"""The HTML report of a default run, opened in Debian's headless Chromium: no console errors,
no requests other than the report file itself, and a screenshot in which the charts are drawn.

Needs: the `lwcbench` binary (LWCBENCH_BIN, default target/release/lwcbench), /usr/bin/chromium
(Debian package, installed by scripts/setup.sh), and the Python packages playwright + pillow.
"""
import os
import pathlib
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
BIN = pathlib.Path(os.environ.get("LWCBENCH_BIN", ROOT / "target" / "release" / "lwcbench"))
CHROMIUM = pathlib.Path(os.environ.get("CHROMIUM", "/usr/bin/chromium"))

# The flags the machine notes prescribe for a closed network: without them Chromium's own
# background services try to reach Google (those are not page requests, but keep the log clean).
FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    out = tmp_path_factory.mktemp("run") / "quick"
    subprocess.run([str(BIN), "run", "--preset", "quick", "--reps", "10", "--warmup", "2", "--out", str(out), "--quiet"], check=True)
    html = out / "report.html"
    assert html.is_file() and html.stat().st_size > 10_000
    return html


def test_report_is_self_contained_and_renders(report, tmp_path):
    if not CHROMIUM.exists():
        pytest.fail(f"{CHROMIUM} missing: scripts/setup.sh installs Debian's chromium package")
    from playwright.sync_api import sync_playwright
    from PIL import Image

    console, requests, page_errors = [], [], []
    shot = tmp_path / "report.png"
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=FLAGS[1:], headless=True)
        page = browser.new_page(viewport={"width": 1300, "height": 1000})
        page.on("console", lambda m: console.append((m.type, m.text)))
        page.on("pageerror", lambda e: page_errors.append(str(e)))
        page.on("request", lambda r: requests.append(r.url))
        page.goto(report.as_uri(), wait_until="load")
        n_svg = page.locator("svg").count()
        page.screenshot(path=str(shot), full_page=True)
        browser.close()

    assert not page_errors, page_errors
    assert not [c for c in console if c[0] in ("error", "warning")], console
    assert requests == [report.as_uri()], f"unexpected requests: {requests}"
    assert n_svg >= 4, f"expected the report's charts, found {n_svg} svg elements"
    img = Image.open(shot).convert("RGB")
    assert img.width >= 1000 and img.height > 2000
    # Count strongly blue pixels (the first series colour, drawn at 75-80 % opacity on white or
    # on the grey stripes): a page without drawn charts has almost none.
    raw = img.tobytes()
    hits = sum(1 for i in range(0, len(raw), 3) if raw[i + 2] - raw[i] > 80 and raw[i + 2] > raw[i + 1] + 30)
    assert hits > 500, f"only {hits} chart-coloured pixels in the screenshot"
