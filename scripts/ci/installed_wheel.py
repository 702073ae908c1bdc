"""The installed wheel's Python verbs, run outside the checkout (scripts/ci/installed.sh wheel).

Usage: VENV/bin/python installed_wheel.py OUT_DIR CHECKOUT
Imports lwcbench from the venv (never from CHECKOUT), then: ciphers, verify (no failure), run
with the quick preset (loaded back, rendered as an HTML table and plotted), choose, and link
(a small session on the embedded broker and SQLite) when the package has the verb.
"""
import sys
from pathlib import Path


def fail(msg: str) -> None:
    sys.exit(f"installed_wheel.py: {msg}")


def main() -> None:
    out, checkout = Path(sys.argv[1]), Path(sys.argv[2]).resolve()
    out.mkdir(parents=True)
    import lwcbench

    where = Path(lwcbench.__file__).resolve()
    if checkout in where.parents:
        fail(f"lwcbench was imported from the checkout ({where}), not from the installed wheel")

    rows = lwcbench.ciphers()
    if len(rows) < 100 or not all("id" in r for r in rows):
        fail(f"ciphers(): {len(rows)} rows")

    checks = lwcbench.verify()
    bad = [c["id"] for c in checks if not c["ok"]]
    if bad or not any(c["passed"] for c in checks):
        fail(f"verify(): failed {bad[:5]}")
    print(f"installed_wheel.py: verify: {sum(c['passed'] for c in checks)} vectors and checks passed, 0 failed")

    run_dir = lwcbench.run(preset="quick", out=out / "quick")
    res = lwcbench.load(run_dir)
    if res.summary.empty or res.samples.empty:
        fail("run(preset='quick'): empty summary or samples")
    html = res._repr_html_()
    if "<table" not in html:
        fail("Results._repr_html_(): no table")
    res.plot(path=out / "quick.png")
    if (out / "quick.png").stat().st_size < 3000:
        fail("Results.plot(): no figure written")

    answer = lwcbench.choose(board="rp2040", radio="LoRa-SF7", interval="10m")
    if not answer.get("ranking"):
        fail("choose(): empty ranking")

    # The embedded broker and SQLite store, as `lwcbench link` runs them.
    link = lwcbench.link(devices=4, messages=25, interval="0ms", out=str(out / "link"))
    if link is None or "link_summary" not in link.tables:
        fail(f"link(): no link_summary table ({link!r})")
    print(f"installed_wheel.py: link: {sorted(link.tables)}")
    print("installed_wheel.py: wheel: ciphers, verify, run --preset quick, choose, link outside the checkout")


if __name__ == "__main__":
    main()
