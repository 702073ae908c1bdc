#!/usr/bin/env python3
"""The NIST LWC NodeMCU v2 (ESP8266) AEAD table in emulation, ours beside the published one.

mcu/nistlwc.py hands `--board nodemcuv2` here. Every implementation the table lists for the
config is built with xtensa-lx106-elf-gcc (the Arduino ESP8266 core's code-generation flags,
data/boards.toml [board.esp8266.lx106]) and mcu/lx106/harness.c, run once in QEMU's lx106 CPU for all its cells
(mcu/lx106.py), and timed with the LX106 model. Output as nistlwc.py's (nist_lwc_cells.csv with
the model's event counts per cell, nist_lwc_impls.csv, nist_lwc.md, run.json), plus the
held-out check of the fitted parameters: the grid of [board.esp8266.lx106.fit] searched on the
training submissions, judged on the others.

The published table's longest message is 512 bytes: the slope is (enc(0:512) - enc(0:128)) / 384.
"""
from __future__ import annotations

import concurrent.futures
import dataclasses
import hashlib
import itertools
import json
import pathlib
import sys
import tempfile
import time

import lx106
import nistlwc
from nistlwc import Fail, err_pct, median_abs, slope, _f
from run import _csv, write_atomic

HI = (0, 512)
CELL_COLS = ["board", "board_profile", "config", "submission", "variant", "implementation", "cell", "ad_bytes",
             "msg_bytes", "published_cycles", "emulated_cycles", "error_pct", *lx106.EVENTS, "note"]
IMPL_COLS = ["board", "board_profile", "config", "submission", "variant", "implementation", "kind", "fit_half",
             "build", "build_error", "published_slope_cpb", "emulated_slope_cpb", "slope_error_pct",
             "slope_insns_per_byte", "total_cell", "published_total", "emulated_total", "total_error_pct",
             "cells_compared", "median_abs_cell_error_pct", "ct_check", "text_bytes"]


def build(root: pathlib.Path, row, bm: lx106.BoardModel, config: str, outdir: pathlib.Path) -> tuple:
    """(elf or None, failure reason, kind, text bytes)."""
    d = nistlwc.impl_dir(root, row)
    if not d.is_dir():
        return None, f"implementation folder missing: {d}", "?", None
    srcs = sorted(p for p in d.iterdir() if p.is_file() and p.suffix in nistlwc.SRC_EXT
                  and p.name not in nistlwc.SKIP_SRC)
    fw = root / "src" / "lwc-benchmarking"
    inc = ["-isystem", str(lx106.LX / "libc" / "include"), "-I", str(d), "-I", str(fw / "include"),
           "-I", str(fw / "src")]
    flags = [nistlwc.CONFIGS[config], *bm.cflags]
    odir = outdir / row.key.replace("/", "__")
    odir.mkdir(parents=True, exist_ok=True)
    objs, asm_objs = [], []
    # without the framework glue the harness calls crypto_aead_encrypt itself
    direct = [] if any(s.stem == "lwc_crypto_aead" for s in srcs) else ["-DLWC_DIRECT"]
    for s in srcs + [lx106.LX / "harness.c"]:
        o = odir / (s.name + ".o")
        # the implementation's own sources keep their assembly listing (.s): inline assembly
        # that was built for this core shows there between #APP and #NO_APP
        keep = ["-save-temps=obj"] if s.suffix in (".c", ".cpp") and s.parent == d else []
        r = lx106.compile_one(s, o, flags + direct + keep, inc)
        if r.returncode and s.stem == "lwc_crypto_aead":
            direct = ["-DLWC_DIRECT"]
            continue
        if r.returncode:
            return None, f"{s.name}: {nistlwc.first_error(r.stderr)}", nistlwc.impl_kind(d, 0), None
        objs.append(o)
        if s.suffix in (".S", ".s"):
            asm_objs.append(o)
    kind = built_kind(odir, asm_objs)
    cxx = any(s.suffix == ".cpp" for s in srcs)
    objs += lx106.runtime_objs(flags, outdir, cxx)
    elf = odir / "image.elf"
    r = lx106.link(objs, elf, cxx=cxx)
    if r.returncode:
        return None, f"link: {nistlwc.first_error(r.stderr)}", kind, None
    return elf, "", kind, nistlwc.text_bytes(elf)


def built_kind(odir: pathlib.Path, asm_objs: list) -> str:
    """asm: assembly sources that assembled to LX106 code; inline-asm: asm statements that the
    compiler emitted for the LX106 (#APP blocks in the listings, not a source text search: the
    implementations' inline assembly is for ARM or AVR, #if-guarded away here); c: neither."""
    if sum(nistlwc.text_bytes(o) for o in asm_objs):
        return "asm"
    for s in odir.glob("*.s"):
        if "#APP" in s.read_text(errors="replace"):
            return "inline-asm"
    return "c"


def fit_half(row, bm) -> str:
    return "train" if row.submission in bm.fit.get("train", []) else "held-out"


def row_slopes(res, timing: lx106.Timing):
    """(published slope, ours, error %) of one result under timing."""
    cs = res["cells"]
    oc = {xy: (timing.cycles(c.events) if c.events and c.rc == 0 else None) for xy, c in cs.items()}
    ps, es = slope(res["row"].cells, HI), slope(oc, HI)
    return ps, es, err_pct(es, ps)


def fit(results, bm) -> dict:
    """Grid search of the [fit] parameters on the training half: the combination with the least
    median |slope error| there, and what it gives on the held-out half."""
    grid = bm.fit.get("grid") or {}
    names = [k for k in grid if k in lx106.TIMING_KEYS]
    ok = [r for r in results if not r["error"] and r["cells"]]
    train = [r for r in ok if fit_half(r["row"], bm) == "train"]
    held = [r for r in ok if fit_half(r["row"], bm) != "train"]

    def med(rs, t):
        return median_abs([row_slopes(r, t)[2] for r in rs])
    best = None
    for combo in itertools.product(*(grid[k] for k in names)):
        t = dataclasses.replace(bm.timing, **dict(zip(names, combo)))
        m = med(train, t)
        if m is not None and (best is None or m < best[0]):
            best = (m, dict(zip(names, combo)), t)
    if best is None:
        return {"names": names, "train_n": len(train), "held_n": len(held)}
    return {"names": names, "best": best[1], "train_median": best[0], "held_median": med(held, best[2]),
            "file_train_median": med(train, bm.timing), "file_held_median": med(held, bm.timing),
            "train_n": len(train), "held_n": len(held), "train": bm.fit.get("train", [])}


def run(a) -> int:
    t0 = time.time()
    if a.primitive != "aead":
        raise Fail(f"--primitive: {a.primitive!r}: the {a.board} route reproduces the AEAD table only")
    try:
        lx106.check_tools()
        bm = lx106.load_board(a.board, getattr(a, "boards_file", None))
    except lx106.Lx106Error as e:
        raise Fail(str(e)) from None
    root = nistlwc.shared_dir()
    table = root / "benchmarks" / f"{bm.table}-aead-summary.csv"
    try:
        rows = nistlwc.parse_table(table.read_text(), str(table), "aead")
    except OSError as e:
        raise Fail(f"{table}: {e}") from None
    import fnmatch
    rows = [r for r in rows if r.config == a.config and (fnmatch.fnmatchcase(r.key, a.impl)
                                                          or fnmatch.fnmatchcase(r.implementation, a.impl))]
    if not rows:
        raise Fail(f"--impl: {a.impl!r} matches no {a.config} row of {table.name}")
    a.out.mkdir(parents=True, exist_ok=True)
    try:
        tools = lx106.toolchain_version()
    except lx106.Lx106Error as e:
        raise Fail(str(e)) from None
    all_cells = sorted(rows[0].cells)
    slope_cells = [nistlwc.SLOPE_LO, HI]
    cells = slope_cells if a.cells == "slope" else sorted(set(all_cells) | set(slope_cells),
                                                          key=lambda c: (c[0] + c[1], c))
    bdir_ctx = tempfile.TemporaryDirectory(prefix="lx106-build-") if not a.build_dir else None
    bdir = pathlib.Path(a.build_dir or bdir_ctx.name)
    results = []

    def one(row):
        elf, why, kind, size = build(root, row, bm, a.config, bdir)
        res = {"row": row, "kind": kind, "error": why, "cells": {}, "text_bytes": size}
        if elf:
            for c in lx106.run_cells(elf, cells, a.max_insns):
                res["cells"][(c.ad, c.msg)] = c
            bad = [c for c in res["cells"].values() if c.error]
            if bad:  # a crash or a cap is a failed row, with the reason
                res["error"] = f"emulation: {bad[0].error} (at enc({bad[0].ad}:{bad[0].msg}))"
        return res
    # one thread per job: each runs its own compiler and QEMU processes
    with concurrent.futures.ThreadPoolExecutor(max_workers=a.jobs) as pool:
        for i, res in enumerate(pool.map(one, rows), 1):
            print(f"[{i}/{len(rows)}] {res['row'].key} ({res['kind']}){' FAILED: ' + res['error'] if res['error'] else ''}",
                  file=sys.stderr, flush=True)
            results.append(res)
    check_outputs(results)
    cell_rows, impl_rows = [], []
    for res in results:
        row, cs = res["row"], res["cells"]
        for xy in (cells if cs else []):
            c = cs.get(xy)
            pub = row.cells.get(xy)
            cyc = bm.timing.cycles(c.events) if c and c.events else None
            cell_rows.append([a.board, bm.id, a.config, row.submission, row.variant, row.implementation,
                              f"enc({xy[0]}:{xy[1]})", xy[0], xy[1], "" if pub is None else pub,
                              "" if cyc is None else cyc, _f(err_pct(cyc, pub)),
                              *(("" if not c or not c.events else c.events[k]) for k in lx106.EVENTS),
                              c.error if c else ""])
        ok = not res["error"]
        oc = {xy: (bm.timing.cycles(c.events) if ok and c.events and c.rc == 0 else None) for xy, c in cs.items()}
        oi = {xy: (c.events["insns"] if ok and c.events and c.rc == 0 else None) for xy, c in cs.items()}
        ps, es = slope(row.cells, HI), slope(oc, HI)
        errs = [err_pct(oc.get(xy), row.cells.get(xy)) for xy in cells]
        res.update(pub_slope=ps, our_slope=es, slope_err=err_pct(es, ps), ins_slope=slope(oi, HI),
                   total_err=err_pct(oc.get(HI), row.cells.get(HI)), oc=oc)
        impl_rows.append([a.board, bm.id, a.config, row.submission, row.variant, row.implementation, res["kind"],
                          fit_half(row, bm), "failed" if res["error"] else "ok", res["error"], _f(ps, "{:.2f}"),
                          _f(es, "{:.2f}"), _f(res["slope_err"]), _f(res["ins_slope"], "{:.2f}"), f"enc(0:{HI[1]})",
                          "" if row.cells.get(HI) is None else row.cells[HI],
                          "" if oc.get(HI) is None else oc[HI], _f(res["total_err"]),
                          sum(e is not None for e in errs), _f(median_abs(errs)), res.get("ct_check", ""),
                          "" if res["text_bytes"] is None else res["text_bytes"]])
    fr = fit(results, bm)
    duration = time.time() - t0
    md = markdown(a, bm, results, fr, tools, duration)
    write_atomic(a.out / "nist_lwc_cells.csv", _csv(CELL_COLS, cell_rows))
    write_atomic(a.out / "nist_lwc_impls.csv", _csv(IMPL_COLS, impl_rows))
    write_atomic(a.out / "nist_lwc.md", md)
    s = summary(results)
    record = {
        "kind": "mcu-nist-lwc", "board": a.board, "primitive": "aead", "config": a.config,
        "board_profile": {"file": bm.path, "id": bm.id, "name": bm.name, "mhz": bm.mhz,
                          "timing": dataclasses.asdict(bm.timing), "sources": bm.sources},
        "impl_filter": a.impl, "cells": a.cells, "max_insns_per_call": a.max_insns, "compiler": tools,
        "cflags": [nistlwc.CONFIGS[a.config], *bm.cflags, *lx106.COMMON, *lx106.C_STD],
        "ldflags": ["-nostdlib", "-T", "mcu/lx106/lx106.ld", "-Wl,--gc-sections", "-lgcc"],
        "emulator": "qemu-system-xtensa -M sim -cpu lx106 -semihosting -d in_asm,exec,nochain",
        "nist_lwc_tree": str(root), "published_table": table.name, "published_unit": "cycles",
        "slope_cells": ["enc(0:128)", f"enc(0:{HI[1]})"], "implementations": len(results),
        "built": sum(1 for r in results if not r["error"]), "medians": s, "fit": fr,
        "duration_s": round(duration, 1), "files": ["nist_lwc_cells.csv", "nist_lwc_impls.csv", "nist_lwc.md"],
        "method": "mcu/lx106/README.md",
    }
    write_atomic(a.out / "run.json", json.dumps(record, indent=1, default=str) + "\n")
    print(f"wrote {a.out} (nist_lwc_cells.csv, nist_lwc_impls.csv, nist_lwc.md, run.json) in {duration:.0f} s",
          file=sys.stderr)
    return 0


def check_outputs(results) -> None:
    """Ciphertext cross-check: the implementations of a variant must agree cell by cell."""
    by_var: dict = {}
    for res in results:
        for xy, c in res["cells"].items():
            if c.events and c.rc == 0:
                by_var.setdefault((res["row"].variant, xy), []).append(hashlib.sha256(c.ct).hexdigest())
    for res in results:
        cs = res["cells"]
        if not cs or res["error"]:
            res["ct_check"] = ""
            continue
        nonzero = [xy for xy, c in cs.items() if c.rc not in (0, None)]
        bad = []
        for xy, c in cs.items():
            ds = by_var.get((res["row"].variant, xy), [])
            if c.rc == 0 and len(ds) > 1 and ds.count(hashlib.sha256(c.ct).hexdigest()) * 2 <= len(ds):
                bad.append(xy)
        others = any(len(by_var.get((res["row"].variant, xy), [])) > 1 for xy in cs)
        res["ct_check"] = (f"rc!=0 at {len(nonzero)} cells" if nonzero else
                           f"differs from the other implementations at {len(bad)} cells" if bad else
                           "agrees" if others else "no other implementation to compare")


def summary(results) -> dict:
    ok = [r for r in results if not r["error"] and r.get("slope_err") is not None]
    c = [r for r in ok if r["kind"] == "c"]
    return {"all_median": median_abs([r["slope_err"] for r in ok]), "all_n": len(ok),
            "c_median": median_abs([r["slope_err"] for r in c]), "c_n": len(c)}


def markdown(a, bm, results, fr, tools, duration) -> str:
    s = summary(results)
    t = bm.timing
    L = [f"# NIST LWC AEAD table, {a.board} ({a.config}): published vs emulated (Xtensa LX106)", "",
         f"Board model **{bm.name}** ({pathlib.Path(bm.path).name}, [board.{bm.id}.lx106]): "
         + ", ".join(f"{k} {getattr(t, k)} ({bm.sources[k]})" for k in lx106.TIMING_KEYS) + ".", "",
         f"Toolchain: {tools}. Published: the NIST LWC benchmarks (real NodeMCU v2, CCOUNT, median of trials); "
         "ours: the LX106 model over QEMU's execution trace of the one crypto_aead_encrypt call.", "",
         f"Median |slope error|: **{_f(s['all_median']) or 'n/a'} %** over all {s['all_n']} implementations that "
         f"build and run; **{_f(s['c_median']) or 'n/a'} %** over the {s['c_n']} assembly-free C ones. "
         f"Run time {duration:.0f} s.", "",
         f"Slope = (enc(0:{HI[1]}) - enc(0:128)) / {HI[1] - 128} cycles per byte.", ""]
    if fr.get("best") is not None:
        L += ["## Held-out check of the fitted parameters", "",
              f"Training half (fixed before fitting): submissions {', '.join(fr['train'])} ({fr['train_n']} rows); "
              f"held out: the rest ({fr['held_n']} rows). Grid best on the training half: "
              + ", ".join(f"{k} = {v}" for k, v in fr["best"].items())
              + f"; training median |slope error| {_f(fr['train_median'])} %, held-out {_f(fr['held_median'])} %. "
              f"With the board file's values: training {_f(fr['file_train_median'])} %, held-out "
              f"{_f(fr['file_held_median'])} %.", ""]
    L += ["| implementation | kind | half | pub. c/B | ours c/B | slope err % | ins/B | ours c/ins | "
          f"enc(0:{HI[1]}) pub. | ours | err % | output check | text B |",
          "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|"]
    for r in results:
        if r["error"]:
            continue
        row = r["row"]
        ins = r.get("ins_slope")
        cpi = r["our_slope"] / ins if r.get("our_slope") and ins else None
        oc = r["oc"].get(HI)
        L.append(f"| {row.key} | {r['kind']} | {fit_half(row, bm)} | {_f(r.get('pub_slope'))} | "
                 f"{_f(r.get('our_slope'))} | {_f(r.get('slope_err'))} | {_f(ins)} | {_f(cpi, '{:.2f}')} | "
                 f"{'' if row.cells.get(HI) is None else f'{row.cells[HI]:,}'} | "
                 f"{'' if oc is None else f'{oc:,}'} | {_f(r.get('total_err'))} | {r.get('ct_check', '')} | "
                 f"{r['text_bytes'] or ''} |")
    fails = [r for r in results if r["error"]]
    L += ["", f"## Failures ({len(fails)})", ""]
    L += [f"* {r['row'].key}: {r['error']}" for r in fails] or ["none"]
    flagged = [r for r in results if r.get("slope_err") is not None and abs(r["slope_err"]) > nistlwc.FLAG_PCT]
    L += ["", f"## Beyond ±{nistlwc.FLAG_PCT:.0f} % (slope): evidence ({len(flagged)})", "",
          "The instruction slope and our CPI beside the CPI the published slope would need for our "
          "instructions, and the model's events per byte. A needed CPI far from the LX106's (1-1.5 for "
          "this code) means the board ran other instructions (another compiler); code larger than the "
          "ESP8266's 32 KB instruction cache means flash-cache misses the warm model does not charge.", ""]
    for r in flagged:
        ins = r.get("ins_slope")
        per = {}
        for k in lx106.EVENTS:
            lo, hi = r["cells"].get(nistlwc.SLOPE_LO), r["cells"].get(HI)
            if lo and hi and lo.events and hi.events:
                per[k] = (hi.events[k] - lo.events[k]) / (HI[1] - 128)
        L += [f"* {r['row'].key} ({r['kind']}): slope error {r['slope_err']:+.1f} %; published "
              f"{r['pub_slope']:.1f} c/B, ours {r['our_slope']:.1f} c/B over {_f(ins)} ins/B"
              + (f" (our CPI {r['our_slope'] / ins:.2f}, published needs {r['pub_slope'] / ins:.2f})" if ins else "")
              + f"; text {r['text_bytes']} B; per byte: "
              + ", ".join(f"{k} {v:.1f}" for k, v in per.items() if v)]
    return "\n".join(L) + "\n"
