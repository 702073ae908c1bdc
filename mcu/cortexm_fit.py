#!/usr/bin/env python3
"""Held-out fit of a Cortex-M board's instruction-fetch parameters to its published NIST LWC table.

Where no reachable document gives a board's flash wait states and instruction-cache geometry (the
Nano 33 BLE's nRF52840: NVMC ICACHE), they may be fitted: global to the board, a handful at most,
never per implementation, on a training half of the published AEAD table fixed before fitting,
and judged on the other half only (docs/metrics.md, "Held-out calibration"; the ESP8266's LX106
parameters were fitted the same way, mcu/lx106_nist.py).

    cortexm_fit.py record --board nano33ble [--impl GLOB] [--dir DIR] [--jobs N]
    cortexm_fit.py fit --board nano33ble [--dir DIR] [--json FILE]

`record` runs mcu/nistlwc.py's table reproduction (config o2, cells enc(0:128) and enc(0:1024):
the per-byte slope) with the board's profile WITHOUT fetch stalls, and keeps every cell's
executed blocks on disk (DIR/traces; default target/cortexm-fit/BOARD) beside the run's
nist_lwc_impls.csv (DIR/run): the emulation, the slow part, runs once.
`fit` re-prices the recorded traces under every point of the board's grid ([board.ID.fit] in
data/boards.toml): cycles = the recorded core cycles + fetch misses x miss_cycles (+ the data
reads from flash x miss_cycles on a board with flash_data_stall), the misses
from the fetch model of mcu/emulate.py (its C twin mcu/nistlwc/fetchsim.c, equal on the tests'
traces). The training half is fixed by rule: the table's submissions in alphabetical order, every
second one from the second (as the ESP8266's). The objective is the median |per-byte slope
error| over the training rows that build, run and pass their checks; ties go to the first grid
point in order. It prints the best point, the training residual and the held-out errors (over
every row and over the rows whose cycles run in assembly, kind asm / inline-asm), and what the
board file's own values give.

Bad input or environment: one `error:` line, exit 2.
"""
from __future__ import annotations

import argparse
import array
import ctypes
import dataclasses
import csv
import hashlib
import itertools
import json
import pathlib
import statistics
import subprocess
import sys
import zlib

MCU = pathlib.Path(__file__).resolve().parent
REPO = MCU.parent
sys.path.insert(0, str(MCU))

import emulate  # noqa: E402
import nistlwc  # noqa: E402

# the grid's parameters, in this order: stall per missed line, line width, cache size (0 = none), ways
FIT_KEYS = ("miss_cycles", "fetch_line_bytes", "cache_bytes", "cache_ways")
ASM_KINDS = ("asm", "inline-asm")
CONFIG = "o2"


class Fail(Exception):
    """Bad input or environment: one `error:` line, non-zero exit."""


def train_submissions(submissions) -> list:
    """The training half, fixed before fitting: the submissions in alphabetical order, every second
    one from the second."""
    return sorted(set(submissions))[1::2]


# --- the C fetch model --------------------------------------------------------------------

_LIB = None


def fetch_lib(cache_dir: pathlib.Path | None = None):
    """mcu/nistlwc/fetchsim.c built with the host's cc as a shared library (once per source)."""
    global _LIB
    if _LIB is not None:
        return _LIB
    src = MCU / "nistlwc" / "fetchsim.c"
    digest = hashlib.sha256(src.read_bytes()).hexdigest()[:16]
    d = cache_dir or REPO / "target" / "cortexm-fit"
    d.mkdir(parents=True, exist_ok=True)
    so = d / f"fetchsim-{digest}.so"
    if not so.is_file():
        tmp = d / f".fetchsim-{digest}.so.tmp"
        r = subprocess.run(["cc", "-O2", "-shared", "-fPIC", "-o", str(tmp), str(src)], capture_output=True, text=True)
        if r.returncode:
            raise Fail(f"{src}: the host's cc does not build it: {nistlwc.first_error(r.stderr)}")
        tmp.replace(so)
    lib = ctypes.CDLL(str(so))
    lib.fetch_misses.restype = ctypes.c_int64
    lib.fetch_misses.argtypes = [ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64, ctypes.c_uint64, ctypes.c_uint64,
                                 ctypes.c_uint32, ctypes.c_uint32, ctypes.c_uint32, ctypes.POINTER(ctypes.c_int64)]
    _LIB = lib
    return lib


def misses(trace: array.array, split: int, line_bytes: int, cache_lines: int, ways: int) -> tuple:
    """(misses before split, misses from split on) of a block trace under one fetch geometry."""
    lib = fetch_lib()
    before = ctypes.c_int64(0)
    addr, _ = trace.buffer_info()
    sets = cache_lines // ways if cache_lines else 0
    got = lib.fetch_misses(addr, len(trace), split, emulate.FLASH[0], emulate.FLASH[0] + emulate.FLASH[1],
                           line_bytes, sets, ways, ctypes.byref(before))
    if got < 0:
        raise Fail(f"fetch model: bad geometry (line {line_bytes} B, {cache_lines} lines, {ways} ways)")
    return before.value, got


# --- record -------------------------------------------------------------------------------

def core_profile(board):
    """The board's profile without fetch stalls: the recorded cycles are the core's alone."""
    return dataclasses.replace(board, flash_ws=0, miss_cycles=0, cache_lines=0, cache_ways=1)


def record(a) -> int:
    boards = emulate.load_boards(a.boards_file)
    if a.board not in boards or boards[a.board].core not in ("m4", "m3", "m0plus"):
        raise Fail(f"--board: {a.board!r} is no Cortex-M board of {a.boards_file}")
    ns = argparse.Namespace(board=a.board, primitive="aead", config=CONFIG, impl=a.impl, cells="slope",
                            max_insns=nistlwc.DEFAULT_MAX_INSNS, jobs=a.jobs, boards_file=a.boards_file,
                            build_dir=str(a.dir / "build"), out=a.dir / "run",
                            profile=core_profile(boards[a.board]), trace_dir=a.dir / "traces")
    return nistlwc.run(ns)


# --- fit ----------------------------------------------------------------------------------

@dataclasses.dataclass
class Impl:
    key: str
    submission: str
    kind: str
    pub_slope: float
    cells: dict  # "ad:msg" -> (core cycles, {geometry: misses}, data reads from flash)
    data_stall: bool = False  # the data reads pay the miss cycles too (board.flash_data_stall)


def geometries(grid: dict) -> list:
    """(line bytes, cache lines, ways) of the grid, no-cache points once per line width."""
    out = []
    for lb in grid["fetch_line_bytes"]:
        for size in grid["cache_bytes"]:
            for w in (grid["cache_ways"] if size else [1]):
                g = (lb, size // lb if size else 0, w)
                if size and (size % lb or (size // lb) % w):
                    continue
                if g not in out:
                    out.append(g)
    return out


def published(board_id: str) -> dict:
    """The board's published o2 AEAD rows by SUBMISSION/VARIANT/IMPL."""
    table = nistlwc.shared_dir() / "benchmarks" / f"{nistlwc.BOARD_TABLE[board_id]}-aead-summary.csv"
    try:
        text = table.read_text()
    except OSError as e:
        raise Fail(f"{table}: {e}") from None
    return {r.key: r for r in nistlwc.parse_table(text, str(table)) if r.config == CONFIG}


def load_impls(d: pathlib.Path, board_id: str, geoms: list, data_stall: bool = False) -> list:
    """The rows of the recorded run that pass their checks, each with its misses per geometry."""
    impls_csv = d / "run" / "nist_lwc_impls.csv"
    try:
        rows = list(csv.DictReader(impls_csv.open()))
    except OSError as e:
        raise Fail(f"{impls_csv}: {e} (run `record` first)") from None
    pub = published(board_id)
    lo, hi = nistlwc.SLOPE_LO, nistlwc.SLOPE_HI
    out = []
    for r in rows:
        key = f"{r['submission']}/{r['variant']}/{r['implementation']}"
        if r["build"] != "ok" or key not in pub:
            continue
        ps = nistlwc.slope(pub[key].cells)
        idx_file = d / "traces" / (key.replace("/", "__") + ".json")
        try:
            idx = json.loads(idx_file.read_text())
        except (OSError, ValueError) as e:
            raise Fail(f"{idx_file}: {e}") from None
        want = [f"{lo[0]}:{lo[1]}", f"{hi[0]}:{hi[1]}"]
        if ps is None or not all(c in idx for c in want):
            continue
        cells = {}
        for c in want:
            ent = idx[c]
            raw = zlib.decompress((d / "traces" / ent["file"]).read_bytes())
            t = array.array("Q")
            t.frombytes(raw)
            if sys.byteorder != "little":
                t.byteswap()
            if len(t) != ent["blocks"] or not 0 <= ent["split"] <= len(t):
                raise Fail(f"{d / 'traces' / ent['file']}: {len(t)} blocks, the index says {ent['blocks']}")
            if data_stall and ent.get("flash_reads") is None:
                raise Fail(f"{idx_file}: recorded without data-read counts (record again)")
            cells[c] = (ent["cycles"], {g: misses(t, ent["split"], *g)[1] for g in geoms}, ent.get("flash_reads") or 0)
        out.append(Impl(key, r["submission"], r["kind"], ps, cells, data_stall))
    return out


def our_slope(im: Impl, geom, miss: int) -> float:
    """Emulated cycles per message byte under one fetch geometry and miss cost."""
    (clo, mlo, rlo), (chi, mhi, rhi) = im.cells.values()
    if not im.data_stall:
        rlo = rhi = 0
    return ((chi + (mhi[geom] + rhi) * miss) - (clo + (mlo[geom] + rlo) * miss)) / (
        nistlwc.SLOPE_HI[1] - nistlwc.SLOPE_LO[1])


def slope_err(im: Impl, geom, miss: int) -> float:
    return 100.0 * (our_slope(im, geom, miss) - im.pub_slope) / im.pub_slope


def med(impls, geom, miss, asm_only=False):
    v = [abs(slope_err(i, geom, miss)) for i in impls if not asm_only or i.kind in ASM_KINDS]
    return statistics.median(v) if v else None


def profile_point(board) -> tuple:
    """(geometry, miss cycles) of a board profile as the fit names them."""
    lines = board.cache_lines if board.code_in != "sram" else 0
    return (board.fetch_line_bytes, lines, board.cache_ways if lines else 1), (
        board.miss_cycles if board.fetch_stalls() else 0)


def fit(impls: list, grid: dict, train: list, board=None) -> dict:
    """Grid search on the training half; the errors of the best point (and of `board`'s own
    values) on both halves."""
    tr = [i for i in impls if i.submission in train]
    ho = [i for i in impls if i.submission not in train]
    best = None
    for geom in geometries(grid):
        for miss in grid["miss_cycles"]:
            m = med(tr, geom, miss)
            if m is not None and (best is None or m < best[0]):
                best = (m, geom, miss)
    if best is None:
        raise Fail("no training row to fit on")

    def errors(geom, miss):
        return {"train_median": med(tr, geom, miss), "train_asm_median": med(tr, geom, miss, True),
                "held_out_median": med(ho, geom, miss), "held_out_asm_median": med(ho, geom, miss, True),
                "all_median": med(impls, geom, miss), "all_asm_median": med(impls, geom, miss, True)}
    _, geom, miss = best
    lb, lines, ways = geom
    out = {"best": {"miss_cycles": miss, "fetch_line_bytes": lb, "cache_lines": lines, "cache_ways": ways},
           **errors(geom, miss), "train": train, "train_rows": len(tr), "held_out_rows": len(ho),
           "train_asm_rows": sum(i.kind in ASM_KINDS for i in tr),
           "held_out_asm_rows": sum(i.kind in ASM_KINDS for i in ho),
           "core_only": errors(geom, 0)}
    if board is not None:
        g, m = profile_point(board)
        out["board_file"] = errors(g, m) if all(g in c[1] for i in impls for c in i.cells.values()) else None
    return out


def run_fit(a) -> int:
    boards = emulate.load_boards(a.boards_file)
    board = boards.get(a.board)
    if board is None or not board.fit:
        raise Fail(f"{a.boards_file}: board {a.board!r} has no [board.{a.board}.fit] grid")
    grid = board.fit.get("grid") or {}
    if sorted(grid) != sorted(FIT_KEYS):
        raise Fail(f"{a.boards_file}: [board.{a.board}.fit] grid must have exactly {', '.join(FIT_KEYS)}")
    geoms = geometries(grid)
    g, _ = profile_point(board)
    if g not in geoms:
        geoms.append(g)  # the board file's own point, to report what it gives
    impls = load_impls(a.dir, a.board, geoms, board.flash_data_stall)
    if not impls:
        raise Fail(f"{a.dir}: no recorded row that passes its checks")
    train = train_submissions(r.submission for r in published(a.board).values())
    if board.fit.get("train") != train:
        raise Fail(f"{a.boards_file}: [board.{a.board}.fit] train {board.fit.get('train')} is not the rule's "
                   f"{train} (every second submission in alphabetical order, from the second)")
    res = fit(impls, grid, train, board)
    res["data_stall"] = board.flash_data_stall
    b = res["best"]
    geom = (b["fetch_line_bytes"], b["cache_lines"], b["cache_ways"])
    miss = b["miss_cycles"]
    res["rows"] = [{"impl": i.key, "kind": i.kind, "half": "train" if i.submission in train else "held-out",
                    "published_slope_cpb": round(i.pub_slope, 2),
                    "emulated_slope_cpb": round(our_slope(i, geom, miss), 2),
                    "slope_error_pct": round(slope_err(i, geom, miss), 2)} for i in impls]
    if a.json:
        nistlwc.write_atomic(a.json, json.dumps(res, indent=1) + "\n")
    if a.csv:
        nistlwc.write_atomic(a.csv, rows_csv(a.board, res))
    if a.check and profile_point(board) != (geom, b["miss_cycles"]):
        raise Fail(f"{a.boards_file}: board {a.board}'s profile {profile_point(board)} is not the grid's best "
                   f"{(geom, b['miss_cycles'])} on the training half")
    print(f"best on the training half ({res['train_rows']} rows: {', '.join(train)}): miss_cycles {b['miss_cycles']}, "
          f"fetch_line_bytes {b['fetch_line_bytes']}, cache_lines {b['cache_lines']}, cache_ways {b['cache_ways']}")
    for k in ("train_median", "train_asm_median", "held_out_median", "held_out_asm_median", "all_median",
              "all_asm_median"):
        print(f"  {k}: {_pct(res[k])}   (core only: {_pct(res['core_only'][k])}"
              + (f"; board file: {_pct(res['board_file'][k])}" if res.get("board_file") else "") + ")")
    print(f"  rows: train {res['train_rows']} ({res['train_asm_rows']} asm), held out {res['held_out_rows']} "
          f"({res['held_out_asm_rows']} asm)")
    return 0


def rows_csv(board_id: str, res: dict) -> str:
    b = res["best"]
    head = (f"# GENERATED by mcu/cortexm_fit.py fit --board {board_id} --csv: do not edit by hand. Per-row\n"
            f"# result of the held-out fit of [board.{board_id}.fit] (data/boards.toml): the NIST LWC {board_id}\n"
            f"# AEAD table, config {CONFIG}, rows that build, run and pass their checks; emulated slope\n"
            "# (enc(0:1024) - enc(0:128)) / 896 with\n"
            f"# the best grid point (miss_cycles {b['miss_cycles']}, fetch_line_bytes {b['fetch_line_bytes']}, "
            f"cache_lines {b['cache_lines']}, cache_ways {b['cache_ways']});\n"
            + ("# each data read from flash also waits miss_cycles (flash_data_stall);\n"
               if res.get("data_stall") else "")
            + "# half: train (fitted on) / held-out (judged on); kind: by where the cycles go (mcu/nistlwc.py).\n")
    cols = ["impl", "half", "kind", "published_slope_cpb", "emulated_slope_cpb", "slope_error_pct"]
    return head + nistlwc._csv(cols, [[r[c] for c in cols] for r in res["rows"]])


def _pct(v):
    return "n/a" if v is None else f"{v:.1f} %"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    for name in ("record", "fit"):
        p = sub.add_parser(name)
        p.add_argument("--board", default="nano33ble")
        p.add_argument("--dir", type=pathlib.Path, help="traces and run (default target/cortexm-fit/BOARD)")
        p.add_argument("--boards-file", default=str(emulate.BOARDS_FILE))
        if name == "record":
            p.add_argument("--impl", default="*", help="glob over SUBMISSION/VARIANT/IMPLEMENTATION or IMPLEMENTATION")
            p.add_argument("--jobs", type=int, default=1)
        else:
            p.add_argument("--json", type=pathlib.Path, help="also write the result as JSON")
            p.add_argument("--csv", type=pathlib.Path, help="also write the per-row result (data/BOARD-fit.csv)")
            p.add_argument("--check", action="store_true",
                           help="fail unless the board file's profile is the grid's best point")
    a = ap.parse_args(argv)
    a.dir = a.dir or REPO / "target" / "cortexm-fit" / a.board
    try:
        return record(a) if a.cmd == "record" else run_fit(a)
    except (Fail, nistlwc.Fail, emulate.BoardError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
