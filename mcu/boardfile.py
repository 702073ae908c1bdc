"""The one Python loader of data/boards.toml: a record per board ([board.ID]: timing profile,
sources, optional power figures) and per compiler target ([target.TRIPLE]: core, timing model,
the board its counts stand for, the toolchains built for it).

mcu/build.py, mcu/emulate.py, mcu/run.py and scripts/data/emulated-cycles.py take their targets and
boards from here; nothing else in Python reads the file. Errors are BoardError, one line naming
the file, the board or target and the key.
"""
from __future__ import annotations

import dataclasses
import pathlib
import re
import tomllib

BOARDS_FILE = pathlib.Path(__file__).resolve().parents[1] / "data" / "boards.toml"
# Timing models mcu/emulate.py implements (CostModel); a target's `model` must be one of them.
MODELS = ("m0plus", "m3", "m4", "rv32")
# Timing models of other routes: lx106 (mcu/lx106.py: QEMU's lx106 CPU and the cycle model whose
# parameters are the board's [board.ID.lx106]).
OTHER_MODELS = ("lx106",)
STATUSES = ("sourced", "estimate")
# Every key a record may have: a misspelt one (`pwoer`) is an error, not a silently missing board.
BOARD_KEYS = {"name", "chip", "triple", "mhz", "code_in", "flash_ws", "fetch_line_bytes", "cache_lines", "cache_ways",
              "miss_cycles", "m4_ldst_pipelining", "flash_data_stall", "verified", "sources", "power", "lx106",
              "fit"}
POWER_KEYS = {"volts", "active_ma", "sleep_ua", "status", "source"}
# [board.ID.lx106]: the LX106 cycle model's extra cycles per event (mcu/lx106.py), its flags, the
# NIST LWC table it reproduces and the held-out fit.
LX106_TIMING = ("base", "load_use", "mul_use", "rsr_use", "taken_branch", "jump", "l32r_flash", "flash_fetch_hit")
LX106_KEYS = {"table", "cflags", "fit", *LX106_TIMING}
TARGET_KEYS = {"core", "model", "emulable", "board", "rust", "cpp"}
CPP_KEYS = {"cxx", "cc", "arch_flags", "libc_flags", "libs"}


class BoardError(ValueError):
    pass


@dataclasses.dataclass(frozen=True)
class Power:
    """[board.ID.power]: datasheet figures for crypto energy from emulated cycles (--board)."""
    volts: float
    active_ma: float
    sleep_ua: float
    status: str  # sourced | estimate
    source: str


@dataclasses.dataclass(frozen=True)
class Lx106:
    """[board.ID.lx106]: the LX106 cycle model of the board (mcu/lx106.py)."""
    table: str  # the NIST LWC benchmark table it reproduces (benchmarks/<table>-aead-summary.csv)
    cflags: tuple  # the framework's code-generation flags
    timing: dict  # extra cycles per event, LX106_TIMING order
    sources: dict  # per timing parameter and cflags: where it comes from ("fitted: ..." if fitted)
    fit: dict  # [board.ID.lx106.fit]: split, grid, residuals

    def fitted(self) -> list:
        """The timing parameters chosen by the held-out fit."""
        return [k for k in LX106_TIMING if self.sources[k].startswith("fitted")]


@dataclasses.dataclass(frozen=True)
class Board:
    id: str
    name: str
    chip: str
    core: str  # the timing model of its target
    triple: str
    mhz: float
    code_in: str  # flash | sram | xip
    flash_ws: int
    fetch_line_bytes: int
    cache_lines: int
    cache_ways: int
    miss_cycles: int  # stall per line fetch that misses (flash_ws unless given)
    m4_ldst_pipelining: bool
    sources: dict
    flash_data_stall: bool = False  # data reads from flash cost miss_cycles each (uncached)
    verified: tuple = ()  # parameters whose source text was read (data/boards.toml)
    power: Power | None = None
    lx106: Lx106 | None = None
    fit: dict = dataclasses.field(default_factory=dict)  # [board.ID.fit]: held-out fetch fit (cortexm_fit.py)

    def fetch_stalls(self) -> bool:
        return self.code_in in ("flash", "xip") and self.miss_cycles > 0

    def describe(self) -> str:
        cache = (f"{self.cache_lines}x{self.fetch_line_bytes} B {self.cache_ways}-way cache" if self.cache_lines
                 else "no cache")
        return (f"{self.id}: {self.chip} {self.core} @ {self.mhz:g} MHz, code in {self.code_in}, "
                f"{self.miss_cycles} stall cycles per missed {self.fetch_line_bytes}-byte line ({cache})"
                + (", M4 load/store pipelining" if self.m4_ldst_pipelining else ""))


@dataclasses.dataclass(frozen=True)
class Cpp:
    """[target.TRIPLE.cpp]: the C++ (DRACO) toolchain."""
    cxx: str
    cc: str
    arch_flags: tuple
    libc_flags: tuple  # headers / C library (for compiler-emitted memcpy/memset)
    libs: tuple


@dataclasses.dataclass(frozen=True)
class Target:
    triple: str
    core: str  # name in tables: Cortex-M0+, RV32IMC, ...
    model: str | None  # timing model, None = instruction counts only
    emulable: bool
    board: str | None  # the board profile of `mcu --preset counts`
    rust: bool  # Rust images are built for it
    cpp: Cpp | None


def _known(t: dict, keys: set, where: str) -> None:
    extra = sorted(set(t) - keys)
    if extra:
        raise BoardError(f"{where}: unknown key {extra[0]!r} (known: {', '.join(sorted(keys))})")


def _getter(t: dict, where: str):
    def get(key, typ, default=None):
        v = t.get(key, default)
        if v is None:
            raise BoardError(f"{where}: missing {key}")
        if typ is float and isinstance(v, int) and not isinstance(v, bool):
            v = float(v)
        if not isinstance(v, typ) or (typ is int and isinstance(v, bool)):
            raise BoardError(f"{where}: {key} must be {typ.__name__}, got {v!r}")
        return v
    return get


def _strings(v, where: str, key: str) -> tuple:
    if not isinstance(v, list) or not all(isinstance(s, str) for s in v):
        raise BoardError(f"{where}: {key} must be a list of strings, got {v!r}")
    return tuple(v)


def _target(triple: str, t, path) -> Target:
    where = f"{path}: target {triple}"
    if not isinstance(t, dict):
        raise BoardError(f"{where}: must be a table")
    _known(t, TARGET_KEYS, where)
    get = _getter(t, where)
    model = t.get("model")
    if model is not None and model not in MODELS + OTHER_MODELS:
        raise BoardError(f"{where}: model must be one of {', '.join(MODELS + OTHER_MODELS)}, got {model!r}")
    cpp = None
    if "cpp" in t:
        c = t["cpp"]
        if not isinstance(c, dict):
            raise BoardError(f"{where}: cpp must be a table")
        cw = f"{where}.cpp"
        _known(c, CPP_KEYS, cw)
        cg = _getter(c, cw)
        cpp = Cpp(cg("cxx", str), cg("cc", str), *(_strings(c.get(k), cw, k) for k in ("arch_flags", "libc_flags",
                                                                                      "libs")))
    board = t.get("board")
    if board is not None and not isinstance(board, str):
        raise BoardError(f"{where}: board must be str, got {board!r}")
    return Target(triple, get("core", str), model, get("emulable", bool), board, get("rust", bool, False), cpp)


def _power(t, where: str) -> Power:
    if not isinstance(t, dict):
        raise BoardError(f"{where}: must be a table")
    _known(t, POWER_KEYS, where)
    get = _getter(t, where)
    nums = {k: get(k, float) for k in ("volts", "active_ma", "sleep_ua")}
    for k, v in nums.items():
        if not 0 < v < 1e6:
            raise BoardError(f"{where}: {k} must be a positive number, got {v}")
    status = get("status", str)
    if status not in STATUSES:
        raise BoardError(f"{where}: status must be sourced or estimate, got {status!r}")
    source = get("source", str)
    if not source.strip():
        raise BoardError(f"{where}: source is empty")
    return Power(status=status, source=source, **nums)


def _lx106(t, sources: dict, where: str) -> Lx106:
    if not isinstance(t, dict):
        raise BoardError(f"{where}: must be a table")
    _known(t, LX106_KEYS, where)
    timing = {}
    for k in LX106_TIMING:
        v = t.get(k)
        if not isinstance(v, int) or isinstance(v, bool) or not 0 <= v <= 100:
            raise BoardError(f"{where}: {k} must be an integer 0..100, got {v!r}")
        timing[k] = v
    for k in (*LX106_TIMING, "cflags"):
        s = sources.get(k)
        if not isinstance(s, str) or not s.strip():
            raise BoardError(f"{where}: {k} has no source in the board's sources table "
                             "(a text that says it, 'estimate: ...' or 'fitted: ...')")
    table = t.get("table")
    if not isinstance(table, str) or not table.isidentifier():
        raise BoardError(f"{where}: table must be a plain name, got {table!r}")
    flags = t.get("cflags")
    # only code-generation options: a board file must not smuggle other compiler options in
    if not isinstance(flags, list) or not all(isinstance(f, str) and re.fullmatch(r"-[mf][a-z0-9=-]+", f)
                                              for f in flags):
        raise BoardError(f"{where}: cflags must be a list of -m/-f options, got {flags!r}")
    fit = t.get("fit", {})
    if not isinstance(fit, dict):
        raise BoardError(f"{where}: fit must be a table")
    for k, vals in (fit.get("grid") or {}).items():
        if k not in LX106_TIMING or not isinstance(vals, list) or not all(
                isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= 100 for v in vals):
            raise BoardError(f"{where}.fit: grid {k}: a timing parameter with a list of integers 0..100")
    return Lx106(table, tuple(flags), timing, {k: sources[k] for k in (*LX106_TIMING, "cflags")}, dict(fit))


# [board.ID.fit] of a Cortex-M board (mcu/cortexm_fit.py): the grid's parameters
FIT_GRID_KEYS = ("miss_cycles", "fetch_line_bytes", "cache_bytes", "cache_ways")
# the board parameters such a fit sets; each needs a `fitted: ...` source
FIT_SETS = ("miss_cycles", "fetch_line_bytes", "cache_lines", "cache_ways")


def _fit(t, sources: dict, where: str) -> dict:
    if not isinstance(t, dict):
        raise BoardError(f"{where}: must be a table")
    grid = t.get("grid")
    if not isinstance(grid, dict) or sorted(grid) != sorted(FIT_GRID_KEYS) or not all(
            isinstance(v, list) and v and all(isinstance(x, int) and not isinstance(x, bool) and 0 <= x <= 65536
                                              for x in v) for v in grid.values()):
        raise BoardError(f"{where}: grid must give {', '.join(FIT_GRID_KEYS)}, each a list of integers 0..65536")
    train = t.get("train")
    if not isinstance(train, list) or not train or not all(isinstance(x, str) for x in train):
        raise BoardError(f"{where}: train must be a list of submissions")
    for k in FIT_SETS:
        if not str(sources.get(k, "")).startswith("fitted"):
            raise BoardError(f"{where}: {k} is fitted: its source must say 'fitted: ...'")
    return dict(t)


def _board(bid: str, t, targets: dict, path) -> Board:
    where = f"{path}: board {bid}"
    if not isinstance(t, dict):
        raise BoardError(f"{where}: must be a table")
    _known(t, BOARD_KEYS, where)
    get = _getter(t, where)
    triple = get("triple", str)
    tgt = targets.get(triple)
    if tgt is None:
        raise BoardError(f"{where}: triple {triple!r} is not a [target.TRIPLE] of the file")
    if tgt.model is None:
        raise BoardError(f"{where}: target {triple} has no timing model")
    code_in = get("code_in", str)
    if code_in not in ("flash", "sram", "xip"):
        raise BoardError(f"{where}: code_in must be flash, sram or xip, got {code_in!r}")
    ints = {k: get(k, int) for k in ("flash_ws", "fetch_line_bytes", "cache_lines", "cache_ways")}
    ints["miss_cycles"] = get("miss_cycles", int, ints["flash_ws"])
    if any(v < 0 for v in ints.values()) or ints["fetch_line_bytes"] not in (2, 4, 8, 16, 32, 64) \
            or ints["cache_ways"] < 1 or (ints["cache_lines"] % ints["cache_ways"]):
        raise BoardError(f"{where}: fetch/cache parameters out of range: {ints}")
    mhz = get("mhz", float)
    if not 0 < mhz < 10_000:
        raise BoardError(f"{where}: mhz out of range: {mhz}")
    sources = t.get("sources", {})
    if not isinstance(sources, dict) or "mhz" not in sources:
        raise BoardError(f"{where}: sources table missing (mhz needs a source)")
    verified = t.get("verified", [])
    if not isinstance(verified, list) or any(v not in sources for v in verified):
        raise BoardError(f"{where}: verified must list parameters that have a source, got {verified!r}")
    power = _power(t["power"], f"{where}.power") if "power" in t else None
    lx = _lx106(t["lx106"], sources, f"{where}.lx106") if "lx106" in t else None
    fit = _fit(t["fit"], sources, f"{where}.fit") if "fit" in t else {}
    if (tgt.model == "lx106") != (lx is not None):
        raise BoardError(f"{where}: a board of an lx106 target needs an [lx106] table, and only such a board")
    return Board(bid, get("name", str), get("chip", str), tgt.model, triple, mhz, code_in,
                 sources=dict(sources), m4_ldst_pipelining=get("m4_ldst_pipelining", bool, False),
                 flash_data_stall=get("flash_data_stall", bool, False),
                 verified=tuple(verified), power=power, lx106=lx, fit=fit, **ints)


def load(path: pathlib.Path | str | None = None) -> tuple[dict[str, Target], dict[str, Board]]:
    """(targets, boards) of the file, in file order; BoardError names the file, record and key."""
    path = pathlib.Path(path or BOARDS_FILE)
    try:
        doc = tomllib.loads(path.read_text())
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as e:
        raise BoardError(f"{path}: {e}") from None
    raw_t, raw_b = doc.get("target") or {}, doc.get("board") or {}
    if not isinstance(raw_t, dict) or not isinstance(raw_b, dict):
        raise BoardError(f"{path}: board and target must be tables")
    targets = {k: _target(k, v, path) for k, v in raw_t.items()}
    boards = {k: _board(k, v, targets, path) for k, v in raw_b.items()}
    if not boards:
        raise BoardError(f"{path}: no [board.ID] tables")
    for t in targets.values():
        if t.board is not None and (t.board not in boards or boards[t.board].triple != t.triple):
            raise BoardError(f"{path}: target {t.triple}: board {t.board!r} is not a board of this target")
        if (t.rust or t.emulable) and t.board is None:
            raise BoardError(f"{path}: target {t.triple}: an emulated target needs the board its counts stand for")
    return targets, boards


def load_boards(path: pathlib.Path | str | None = None) -> dict[str, Board]:
    """The board profiles by id (file order)."""
    return load(path)[1]


def load_targets(path: pathlib.Path | str | None = None) -> dict[str, Target]:
    """The targets by triple (file order)."""
    return load(path)[0]


def lx106_board(name: str, path: pathlib.Path | str | None = None) -> Board:
    """The LX106 board called `name`: its id (esp8266) or the NIST LWC table it reproduces
    (nodemcuv2)."""
    boards = load_boards(path)
    for b in boards.values():
        if b.lx106 is not None and name in (b.id, b.lx106.table):
            return b
    known = [f"{b.id} ({b.lx106.table})" for b in boards.values() if b.lx106 is not None]
    raise BoardError(f"{path or BOARDS_FILE}: no LX106 board {name!r} (known: {', '.join(known) or 'none'})")


def power_boards(path: pathlib.Path | str | None = None) -> list[Board]:
    """The boards `--board` offers (those with [board.ID.power]), in file order: the rows of
    data/board-power.csv."""
    return [b for b in load_boards(path).values() if b.power is not None]
