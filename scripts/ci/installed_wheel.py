"""The installed wheel's Python verbs, run outside the checkout (scripts/ci/installed.sh wheel).

Usage: VENV/bin/python installed_wheel.py OUT_DIR CHECKOUT
Imports lwcbench from the venv (never from CHECKOUT), then every Python verb: ciphers, verify
(no failure), run with the quick preset (loaded back, rendered as an HTML table and plotted),
compare (the quick run against itself: every group "no change"), collect (a board log written
here in docs/board.md's line format), choose, link (a small session on the embedded broker and
SQLite), and mcu, which outside a checkout raises InputError naming LWCBENCH_ROOT.
"""
import json
import sys
import zlib
from pathlib import Path


def board_line(body: str) -> str:
    """A board line: its body, then the body's CRC-32 (zlib's, docs/board.md)."""
    return f"{body} *{zlib.crc32(body.encode()):08x}"


def board_log() -> str:
    """A complete board log of one group (docs/board.md): header, one warm-up and two sample
    lines, and the end line with the CRC over the W and S bodies."""
    header = ("LWCB H 1 board=demo mcu=Cortex-M0+ cpu_hz=1000000 tick_hz=1000000 timer=demo cycles=none "
              "reps=2 warmup=1 groups=1 min_sample_ticks=100 seed=1 ciphers=Trivium/rust/Rust")
    rows = [
        "LWCB W 0 Trivium rust Rust stream init s,s 0 random 0 4 400 -",
        "LWCB S 1 Trivium rust Rust stream init s,s 0 random 0 4 420 -",
        "LWCB S 2 Trivium rust Rust stream init s,s 0 random 1 4 440 -",
    ]
    crc = zlib.crc32("".join(r + "\n" for r in rows).encode())
    end = f"LWCB E samples=2 warmup=1 crc={crc:08x}"
    return "\n".join(board_line(b) for b in [header, *rows, end]) + "\n"


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
    listed = json.loads((Path(run_dir) / "run.json").read_text(encoding="utf-8"))["files"]
    if "report.html" not in listed or not (Path(run_dir) / "report.html").is_file():
        fail(f"run(preset='quick'): report.html not written in the run's unit (run.json lists {listed})")
    html = res._repr_html_()
    if "<table" not in html:
        fail("Results._repr_html_(): no table")
    res.plot(path=out / "quick.png")
    if (out / "quick.png").stat().st_size < 3000:
        fail("Results.plot(): no figure written")

    # The run against itself: identical samples, so every group is "no change" at ratio 1.
    df = lwcbench.compare(run_dir, run_dir)
    if df.empty or set(df["verdict"]) != {"no change"} or not (df["ratio"] == 1.0).all():
        fail(f"compare(run, run): expected every group 'no change' at ratio 1, got {df[['verdict', 'ratio']]!r}")
    print(f"installed_wheel.py: compare: {len(df)} groups, no change")

    (out / "board.log").write_text(board_log(), encoding="utf-8")
    col = lwcbench.collect(out / "board.log", out=out / "collected")
    ns = sorted(col.samples["ns_per_op"].astype(float))
    # 420 and 440 ticks of a 1 MHz timer over batches of 4 operations
    if ns != [105000.0, 110000.0]:
        fail(f"collect(): samples ns_per_op {ns}, expected [105000.0, 110000.0]")
    if not (col.path / "report.html").is_file():
        fail("collect(): no report.html")

    # mcu needs a checkout's cross toolchains: one line naming LWCBENCH_ROOT, nothing written.
    try:
        lwcbench.mcu(out / "mcu")
    except lwcbench.InputError as e:
        msg = str(e)
        if "LWCBENCH_ROOT" not in msg or "\n" in msg:
            fail(f"mcu(): expected one line naming LWCBENCH_ROOT, got {msg!r}")
    else:
        fail("mcu() ran without a checkout")
    if (out / "mcu").exists():
        fail("mcu() without a checkout created its output directory")

    answer = lwcbench.choose(board="rp2040", radio="LoRa-SF7", interval="10m")
    if not answer.get("ranking"):
        fail("choose(): empty ranking")

    # The embedded broker and SQLite store, as `lwcbench link` runs them.
    link = lwcbench.link(devices=4, messages=25, interval="0ms", out=str(out / "link"))
    if link is None or "link_summary" not in link.tables:
        fail(f"link(): no link_summary table ({link!r})")
    print(f"installed_wheel.py: link: {sorted(link.tables)}")
    print("installed_wheel.py: wheel: ciphers, verify, run --preset quick, compare, collect, choose, link and "
          "mcu's refusal outside the checkout")


if __name__ == "__main__":
    main()
