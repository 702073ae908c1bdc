"""lwcbench from Python: the verified cipher implementations, the benchmark engine, the
sealed link, a pandas loader for their result files and publication figures. Every verb of the
``lwcbench`` command line is a function here, served by the same Rust application layer, so
the two give the same rows.

    >>> import lwcbench
    >>> run_dir = lwcbench.run(preset="quick")          # doctest: +SKIP
    >>> res = lwcbench.load(run_dir)                     # doctest: +SKIP
    >>> from lwcbench import plots
    >>> plots.boxplot_time(res, scenario="full", path="full.pdf")  # doctest: +SKIP

Errors are :class:`LwcbenchError`: :class:`InputError` (bad input; also a ``ValueError``),
:class:`AuthenticationError` (a tag that does not verify) and :class:`ServiceError` (a broker
or store that fails).
"""
from __future__ import annotations

import datetime as _dt
import json as _json
import os as _os
import re as _re
import sys as _sys
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Union

from . import _native
from ._native import AuthenticationError, InputError, LwcbenchError, ServiceError
from .results import Results, ResultsError, load, load_energy

__version__ = _native.__version__
__all__ = [
    "ciphers", "presets", "keystream", "encrypt", "decrypt", "run", "verify", "report", "vectors_dir", "choose",
    "link", "compare", "mcu", "mcu_nist_lwc", "mcu_check_board", "collect",
    "load", "load_energy", "Results", "ResultsError",
    "LwcbenchError", "InputError", "AuthenticationError", "ServiceError", "__version__",
]


def __dir__() -> List[str]:
    """The public names and the module's dunder attributes, nothing imported for internal use."""
    return sorted(set(__all__) | {n for n in globals() if n.startswith("__") and n.endswith("__")})


BytesLike = Union[bytes, bytearray, memoryview]


def ciphers(frame: bool = False):
    """Every registered implementation with its metadata, in listing order: a list of dicts,
    or a pandas DataFrame with ``frame=True``.

    Keys: ``id`` ("Name/impl"), ``cipher``, ``implementation``, ``family`` (stream, block,
    aead), ``key_bits``, ``iv_bits``, ``block_bits``, ``tag_bits``, ``state_bytes``,
    ``origin``, ``language``, ``bit_order``, ``bit_granular``, ``note``.

    >>> "ChaCha20-Poly1305" in {c["cipher"] for c in lwcbench.ciphers()}
    True
    """
    rows = _native.ciphers()
    if frame:
        import pandas as pd

        return pd.DataFrame(rows)
    return rows


def presets() -> List[Dict[str, Any]]:
    """The named, reproducible experiments (name, about, reps, warmup), as ``lwcbench presets``.

    >>> "quick" in [p["name"] for p in lwcbench.presets()]
    True
    """
    return _native.presets_list()


def keystream(cipher_id: str, key: BytesLike, iv: BytesLike, nbits: int) -> bytes:
    """The first ``nbits`` keystream bits of a stream cipher, packed into ``ceil(nbits/8)``
    bytes in the cipher's bit order (unused bits of a partial last byte are zero).

    ``cipher_id`` is "Name/impl" or a bare name (its first implementation). Wrong key/IV
    lengths raise :class:`InputError` (a ``ValueError``) with the cipher's own error text.

    >>> lwcbench.keystream("ChaCha20", bytes(32), bytes(12), 64).hex()  # RFC 8439 A.1, test vector 1
    '76b8e0ada0f13d90'
    """
    if nbits < 0:
        raise InputError(f"nbits must be >= 0, got {nbits}")
    return _native.keystream(cipher_id, bytes(key), bytes(iv), int(nbits))


def encrypt(cipher_id: str, key: BytesLike, iv: BytesLike, data: BytesLike, ad: BytesLike = b"") -> bytes:
    """Encrypt ``data``.

    * stream cipher: ``data`` XOR keystream;
    * AEAD: ciphertext followed by the tag (``iv`` is the nonce, ``ad`` the associated data);
    * block cipher: raw ECB over whole blocks (``iv`` must be empty); other lengths raise.

    >>> sealed = lwcbench.encrypt("ChaCha20-Poly1305", bytes(32), bytes(12), b"hello")
    >>> len(sealed)  # 5 bytes of ciphertext, then the 16-byte tag
    21
    """
    return _native.encrypt(cipher_id, bytes(key), bytes(iv), bytes(data), bytes(ad))


def decrypt(cipher_id: str, key: BytesLike, iv: BytesLike, data: BytesLike, ad: BytesLike = b"") -> bytes:
    """Inverse of :func:`encrypt`. For an AEAD, ``data`` is ciphertext followed by the tag; a
    tag that does not verify raises :class:`AuthenticationError` and no plaintext is returned
    (bad arguments raise :class:`InputError`).

    >>> key, nonce = bytes(32), bytes(12)
    >>> sealed = lwcbench.encrypt("ChaCha20-Poly1305", key, nonce, b"hello")
    >>> lwcbench.decrypt("ChaCha20-Poly1305", key, nonce, sealed)
    b'hello'
    >>> forged = sealed[:-1] + bytes([sealed[-1] ^ 1])
    >>> lwcbench.decrypt("ChaCha20-Poly1305", key, nonce, forged)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    lwcbench.AuthenticationError: ChaCha20-Poly1305/...: authentication failed (tag mismatch)
    """
    return _native.decrypt(cipher_id, bytes(key), bytes(iv), bytes(data), bytes(ad))


def _names(v: Union[None, str, Iterable[str]]) -> List[str]:
    """"a,b" or ["a", "b"] (as on the command line) -> ["a", "b"]."""
    if v is None:
        return []
    items = [v] if isinstance(v, str) else list(v)
    return [p.strip() for s in items for p in str(s).split(",") if p.strip()]


def _kivs(v: Union[None, str, Iterable[str]]) -> List[str]:
    """"ss,rr", ["s,s", "r,r"] or the single label "s,s" -> list of labels (parsed in Rust)."""
    if v is None:
        return []
    if isinstance(v, str):
        t = v.replace(" ", "")
        return [t] if _re.fullmatch(r"<?[sSrR],[sSrR]>?", t) else _names(t)
    return [str(x).strip() for x in v]


def _size_bits(s: Union[int, str]) -> int:
    """1024 or "1024" bits; "16B", "64KiB", "1MiB" bytes (as ``lwcbench run --sizes``)."""
    if isinstance(s, bool):
        raise InputError(f"sizes: {s!r} is not a size")
    if isinstance(s, int):
        return s
    t = str(s).strip()
    for suffix, mul in (("KiB", 8 * 1024), ("MiB", 8 * 1024 * 1024), ("B", 8)):
        if t.endswith(suffix):
            t, m = t[: -len(suffix)].strip(), mul
            break
    else:
        m = 1
    if not t.isdigit():
        raise InputError(f"sizes: {s!r} is not a size (bits, or bytes with B/KiB/MiB)")
    return int(t) * m


def _material(name: str, v: Union[None, str, BytesLike]) -> Optional[bytes]:
    if v is None:
        return None
    if isinstance(v, str):
        try:
            return bytes.fromhex(v)
        except ValueError as e:
            raise InputError(f"{name}: not hex ({e})") from None
    return bytes(v)


def run(
    preset: Optional[str] = None,
    cipher: Union[None, str, Sequence[str]] = None,
    impl: Union[None, str, Sequence[str]] = None,
    scenario: Union[None, str, Sequence[str]] = None,
    sizes: Union[None, int, str, Sequence[Union[int, str]]] = None,
    kiv: Union[None, str, Sequence[str]] = None,
    reps: Optional[int] = None,
    warmup: Optional[int] = None,
    seed: Optional[int] = None,
    out: Union[None, str, "_os.PathLike[str]"] = None,
    force: bool = False,
    *,
    key: Union[None, str, BytesLike] = None,
    iv: Union[None, str, BytesLike] = None,
    min_sample_us: Optional[float] = None,
    progress: Union[None, bool, Callable[[int, int, str], Any]] = None,
    all: bool = False,  # noqa: A002 - the CLI's --all
    payload: Optional[str] = None,
    dataset: Union[None, str, "_os.PathLike[str]"] = None,
    channels: Union[None, str, Sequence[str]] = None,
    encoding: str = "float32",
    byte_order: str = "be",
    layout: str = "interleaved",
    readings: Optional[int] = None,
    report: bool = True,
    dataset_encoding: str = "utf8",
    power_profile: Optional[str] = None,
    watts: Optional[float] = None,
    board: Optional[str] = None,
    energy_from: Union[None, str, "_os.PathLike[str]"] = None,
    video: Union[None, str, "_os.PathLike[str]"] = None,
    frames: Optional[int] = None,
    engine: Union[None, str, Sequence[str]] = None,
    weights: Optional[str] = None,
    budget: Union[None, str, Sequence[str]] = None,
    repeat: int = 1,
    counter: str = "time",
    twin: Optional[int] = None,
) -> str:
    """Run a benchmark and return the absolute path of its result directory.

    Same options and defaults as ``lwcbench run``: without ``preset`` and without a selection
    (``cipher``/``impl``/``scenario``) the default preset runs; explicit options override a
    preset. Lists may be given as Python sequences or comma-separated strings; ``kiv`` takes
    ``ss, sr, rs, rr`` (or ``"s,s"``…); ``sizes`` are bits, or bytes with a ``B``/``KiB``/``MiB``
    suffix. ``seed=None`` draws a seed and records it in ``run.json``. ``out=None`` writes to
    ``./lwcbench-results/<UTC time>-<preset>``; an existing finished run there is refused
    unless ``force=True``. Invalid input raises :class:`InputError` (a ``ValueError``) before
    anything is measured.

    The GIL is released while measuring, so other Python threads keep running (they share
    the CPU with the measurement, though: keep the machine otherwise idle for clean numbers).
    Runs started from several threads measure one after the other, never at the same time.
    Ctrl-C is noticed only when the run has finished.

    Keyword-only options as on the command line: ``all=True`` selects every stream cipher and
    AEAD; ``payload`` ("random", "dataset" or "both"), ``dataset`` (sensor CSV; default the
    built-in office-building data), ``channels``, ``encoding`` ("float32" or "int32:SCALE"),
    ``byte_order`` ("be"/"le"), ``layout`` ("interleaved"/"per-channel") and ``readings``
    choose the payload; ``report=True`` writes ``report.html`` as ``lwcbench run`` does.
    ``dataset_encoding``, ``power_profile``, ``watts``, ``board``, ``energy_from`` (a collected
    run's ``energy.csv``: measured energy beside the modelled, docs/power.md), ``video``, ``frames``, ``engine``
    (one engine per list item), ``weights``, ``budget`` and ``twin`` are the options of the
    same names (see ``lwcbench run --help``); both front-ends resolve them with the same Rust
    code. ``repeat`` above 1 and ``counter="instructions"`` are command-line workflows (they
    write several directories or re-execute the command line) and raise :class:`InputError` here.

    ``progress=True`` prints a progress line to stderr; a callable is called as
    ``progress(done_samples, total_samples, group_label)`` at most every 200 ms and once at
    the end. If it raises, the run still completes and writes its files, then the exception
    propagates.

    The ics-latency preset also measures GOOSE and Modbus/TCP in the cycle, as ``lwcbench run``
    does (GOOSE needs root; without it the run says so in its notes).

    >>> import tempfile
    >>> d = lwcbench.run(cipher="ChaCha20", scenario="init", kiv="ss", reps=3, warmup=0, seed=1,
    ...                  out=tempfile.mkdtemp() + "/run")
    >>> r = lwcbench.load(d)
    >>> sorted(set(r.summary["scenario"].astype(str))), r.run["seed"]
    (['init'], 1)
    """
    if isinstance(sizes, (int, str)):
        sizes = [sizes]
    size_list = [_size_bits(p) for s in (sizes or []) for p in (s.split(",") if isinstance(s, str) else [s])]
    if any(s < 0 for s in size_list):
        raise InputError(f"sizes: negative size in {size_list}")
    given = {
        "preset": preset, "cipher": cipher, "impl": impl, "scenario": scenario, "sizes": sizes,
        "kiv": kiv, "reps": reps, "warmup": warmup, "seed": seed, "out": _os.fspath(out) if out is not None else None,
        "force": force or None, "min_sample_us": min_sample_us, "all": all or None, "payload": payload,
        "dataset": _os.fspath(dataset) if dataset is not None else None, "channels": channels,
        "encoding": encoding if encoding != "float32" else None, "byte_order": byte_order if byte_order != "be" else None,
        "layout": layout if layout != "interleaved" else None, "readings": readings,
        "key": key if key is None or isinstance(key, str) else bytes(key).hex(),
        "iv": iv if iv is None or isinstance(iv, str) else bytes(iv).hex(),
        "dataset_encoding": dataset_encoding if dataset_encoding != "utf8" else None,
        "power_profile": power_profile, "watts": watts, "board": board,
        "energy_from": _os.fspath(energy_from) if energy_from is not None else None,
        "video": _os.fspath(video) if video is not None else None, "frames": frames, "engine": engine,
        "weights": weights, "budget": budget, "repeat": repeat if repeat != 1 else None,
        "counter": counter if counter != "time" else None, "twin": twin,
    }
    return _native.run(
        preset=preset,
        cipher=_names(cipher),
        implementation=_names(impl),
        scenario=_names(scenario),
        sizes=size_list,
        kiv=_kivs(kiv),
        reps=reps,
        warmup=warmup,
        seed=seed,
        out=_os.fspath(out) if out is not None else None,
        force=bool(force),
        key=_material("key", key),
        iv=_material("iv", iv),
        min_sample_us=min_sample_us,
        call=_call("run", **given),
        progress=_stderr_progress if progress is True else (progress or None),
        all=bool(all),
        payload=payload,
        dataset=_os.fspath(dataset) if dataset is not None else None,
        channels=_names(channels),
        encoding=encoding,
        byte_order=byte_order,
        layout=layout,
        readings=readings,
        report=bool(report),
        dataset_encoding=dataset_encoding,
        power_profile=power_profile,
        watts=watts,
        board=board,
        # only when given: a package whose native part predates the option still runs the rest
        **({"energy_from": _os.fspath(energy_from)} if energy_from is not None else {}),
        video=_os.fspath(video) if video is not None else None,
        frames=frames,
        engine=[engine] if isinstance(engine, str) else list(engine or []),
        weights=weights,
        budget=[budget] if isinstance(budget, str) else list(budget or []),
        repeat=repeat,
        counter=counter,
        twin=twin,
    )


def _stderr_progress(done: int, total: int, label: str) -> None:
    end = "\n" if done >= total else ""
    _sys.stderr.write(f"\rlwcbench: {done}/{total} samples ({100 * done / max(total, 1):.0f} %)  {label[:60]:<60}{end}")
    _sys.stderr.flush()


def verify(cipher: Union[None, str, Sequence[str]] = None, vectors: Union[None, str, "_os.PathLike[str]"] = None,
           torture_loops: Optional[int] = None) -> List[Dict[str, Any]]:
    """Run the known-answer tests, cross-checks and the misuse torture (as ``lwcbench
    verify``; ``torture_loops`` as its ``--torture-loops``, 0 skips the torture).

    Returns one dict per check: ``id``, ``what``, ``passed`` (vectors that matched),
    ``failures`` (one line per mismatch), ``skipped`` (shared vector folder absent) and
    ``ok``. The official vectors are found as by the CLI (``$LWCBENCH_VECTORS``,
    ``../shared/vectors``) unless ``vectors`` names the folder.

    >>> all(c["ok"] for c in lwcbench.verify("ChaCha20-Poly1305"))
    True
    """
    loops = {} if torture_loops is None else {"torture_loops": int(torture_loops)}
    return _native.verify(cipher=_names(cipher), vectors=_os.fspath(vectors) if vectors is not None else None, **loops)


def report(run_dir: Union[str, "_os.PathLike[str]"]) -> str:
    """(Re)write ``report.html`` and ``summary.md`` of a run directory, as ``lwcbench report
    DIR``; returns the path of the HTML report.

    >>> import tempfile
    >>> d = lwcbench.run(cipher="ChaCha20", scenario="init", kiv="ss", reps=3, warmup=0, seed=1,
    ...                  out=tempfile.mkdtemp() + "/run", report=False)
    >>> lwcbench.report(d).endswith("report.html")
    True
    """
    return _native.report(_os.fspath(run_dir))


def choose(
    board: str,
    radio: str,
    interval: Union[str, float, _dt.timedelta],
    payload: Union[str, int] = "16B",
    flash: Union[None, str, int] = None,
    ram: Union[None, str, int] = None,
    security: int = 128,
    tag: int = 128,
    require: Optional[str] = None,
    weights: Optional[str] = None,
    lifetime: Union[str, float, _dt.timedelta] = "10y",
    allow_provisional: bool = False,
    allow_variable_time: bool = False,
    chemistry: str = "alkaline-AA",
    battery_mah: float = 2400.0,
    battery_v: float = 3.0,
    region: Optional[str] = None,
    sleep_ua: Optional[float] = None,
    active_ma: Optional[float] = None,
    boards: Union[None, str, "_os.PathLike[str]"] = None,
    radios: Union[None, str, "_os.PathLike[str]"] = None,
    dtim: Optional[int] = None,
    framing: Optional[str] = None,
    edhoc: bool = False,
    cipher: Optional[str] = None,
    out: Union[None, str, "_os.PathLike[str]"] = None,
    force: bool = False,
) -> Dict[str, Any]:
    """``lwcbench choose`` through the same code as the CLI: the ranked, explained answer
    for a board, a radio and a requirement, as the dict ``lwcbench choose --json`` prints
    (schema ``lwcbench-choose/2``, docs/choose.md). ``interval`` and ``lifetime`` are the
    CLI's strings (``"10m"``, ``"10y"``), a ``datetime.timedelta`` or seconds; ``payload``,
    ``flash`` and ``ram`` are the CLI's strings (``"16B"``, ``"32KiB"``) or a number of bytes;
    ``weights`` and ``require`` as on the command line (``"energy=3,latency=1"``,
    ``"reviewed"``); ``tag`` is 64, 96 or 128 bits. ``region`` (``"EU868"``), ``sleep_ua``,
    ``active_ma``, ``boards``/``radios`` (your board and radio files in the data/ schema) and
    ``dtim`` (1, 3 or 10) are ``--region``, ``--sleep-ua``, ``--active-ma``, ``--boards``,
    ``--radios`` and ``--dtim``. ``framing`` (``"link"``, ``"oscore"``, ``"auto"``), ``edhoc`` and
    ``cipher`` are ``--framing``, ``--edhoc`` and ``--cipher`` (OSCORE over CoAP, docs/choose.md "OSCORE"). ``out`` also writes choose.json,
    choose.html and choose.txt there, all or none (``force`` replaces an earlier answer, as
    ``--force``). Bad input raises :class:`InputError` with the CLI's message (it names the
    option).

    >>> import datetime
    >>> a = lwcbench.choose("rp2040", "LoRa-SF9", datetime.timedelta(minutes=10), payload=16)
    >>> a == lwcbench.choose("rp2040", "LoRa-SF9", "10m", payload="16B")
    True
    >>> a["schema"]
    'lwcbench-choose/2'
    """
    text = _native.choose(
        board, radio, _duration("interval", interval), payload=_bytes("payload", payload),
        flash=None if flash is None else _bytes("flash", flash), ram=None if ram is None else _bytes("ram", ram),
        security=int(security), tag=int(tag), require=require, weights=weights,
        lifetime=_duration("lifetime", lifetime), allow_provisional=bool(allow_provisional),
        allow_variable_time=bool(allow_variable_time), chemistry=chemistry,
        battery_mah=float(battery_mah), battery_v=float(battery_v), region=region,
        sleep_ua=None if sleep_ua is None else float(sleep_ua),
        active_ma=None if active_ma is None else float(active_ma),
        boards=_os.fspath(boards) if boards is not None else None,
        radios=_os.fspath(radios) if radios is not None else None,
        dtim=None if dtim is None else int(dtim),
        framing=framing, edhoc=bool(edhoc), cipher=cipher,
        out=_os.fspath(out) if out is not None else None,
        force=bool(force),
    )
    return _json.loads(text)


def _duration(name: str, v: Union[str, float, _dt.timedelta]) -> str:
    """A CLI duration string from a string (as is), a timedelta or a number of seconds, in the
    largest unit that keeps it exact (s, ms, else seconds with six decimals)."""
    if isinstance(v, str):
        return v
    if isinstance(v, bool) or not isinstance(v, (int, float, _dt.timedelta)):
        raise InputError(f"{name}: {v!r} is not a duration (a string such as '10ms', seconds or a timedelta)")
    if isinstance(v, _dt.timedelta):
        us = v // _dt.timedelta(microseconds=1)
    else:
        if v != v or v in (float("inf"), float("-inf")):
            raise InputError(f"{name}: {v!r} is not a duration")
        us = round(v * 1_000_000)
    if us < 0:
        raise InputError(f"{name}: {v!r} is negative")
    if us % 1_000_000 == 0:
        return f"{us // 1_000_000}s"
    if us % 1000 == 0:
        return f"{us // 1000}ms"
    return f"{us / 1e6:.6f}s"


def _bytes(name: str, v: Union[str, int]) -> str:
    """A CLI size string from a string (as is) or a number of bytes."""
    if isinstance(v, str):
        return v
    if isinstance(v, bool) or not isinstance(v, int):
        raise InputError(f"{name}: {v!r} is not a size (a number of bytes or a string such as '32KiB')")
    if v < 0:
        raise InputError(f"{name}: {v} is negative")
    return f"{v}B"


# Options of `lwcbench link` that take a duration with a unit: numbers (seconds) and
# timedeltas given for them become such strings.
_LINK_DURATIONS = {
    "interval", "report_interval", "duration", "forge_every", "resend_window", "sample_every", "stats_every",
    "step", "write_deadline", "handshake_timeout", "idle_timeout", "frame_deadline",
}
# The kinds of link(): a subcommand of `lwcbench link`, or the session itself.
_LINK_KINDS = {
    "session": None, "attack": None, "gateway": "gateway", "device": "device", "chaos": "chaos",
    "overload": "overload", "goose": "goose", "modbus": "modbus", "modbus_proxy": "modbus-proxy",
    "keygen": "keygen", "provision": "provision",
}


def _argv(options: Dict[str, Any], durations: Iterable[str] = ()) -> List[str]:
    """Keyword options as the command line's: ``foo_bar=1`` -> ``--foo-bar 1``; ``True`` -> the
    flag alone; ``False``/``None`` -> left out; a list -> comma-separated; a timedelta (or a
    number for an option in ``durations``) -> a duration with a unit; a path -> its text."""
    durations = set(durations)
    out: List[str] = []
    for k, v in options.items():
        if v is None or v is False:
            continue
        flag = "--" + k.replace("_", "-")
        if v is True:
            out.append(flag)
            continue
        if isinstance(v, _dt.timedelta) or (k in durations and isinstance(v, (int, float))):
            text = _duration(k, v)
        elif isinstance(v, _dt.timedelta):
            text = str(v.total_seconds())
        elif isinstance(v, (list, tuple)):
            text = ",".join(str(x) for x in v)
        elif isinstance(v, _os.PathLike):
            text = _os.fspath(v)
        else:
            text = str(v)
        out += [flag, text]
    return out


def link(kind: str = "session", **options: Any) -> Optional[Results]:
    """``lwcbench link``: the chosen cipher on a sensor → broker → gateway → store path,
    measured (docs/link.md), through the same code as the CLI. Returns the run's
    :class:`Results` (its CSV files in ``tables``, ``run.json`` in ``run``), or None for what
    writes no result directory (``gateway``, ``device``, ``keygen``, ``provision``).

    ``kind`` is ``"session"`` (the default), ``"attack"`` (the session with ``--attack``),
    ``"gateway"``, ``"device"``, ``"chaos"``, ``"overload"``, ``"goose"``, ``"modbus"``,
    ``"modbus_proxy"``, ``"keygen"`` or ``"provision"``. Options are the command line's, in
    Python spelling (``devices=10``, ``report_interval=...``, ``allow_provisional=True``):
    durations take strings (``"10ms"``), seconds or ``datetime.timedelta``; lists become
    comma-separated. ``out`` defaults to ``./lwcbench-results/<UTC time>-link…``. The
    session's progress lines are printed, as by the CLI. Raises :class:`InputError` for bad
    options, :class:`ServiceError` when the broker or store fails, before or during the run.
    A gateway, device or chaos run needs the ``lwcbench`` binary for its processes (chaos:
    ``LWCBENCH_BIN`` or ``lwcbench`` on PATH).

    >>> import datetime, tempfile
    >>> r = lwcbench.link(cipher="Ascon-AEAD128", devices=1, messages=5,
    ...                   interval=datetime.timedelta(0), out=tempfile.mkdtemp() + "/link")
    >>> r.run["kind"], sorted(r.tables)
    ('link', ['link_energy', 'link_messages', 'link_summary'])
    """
    if kind not in _LINK_KINDS:
        raise InputError(f"link: '{kind}' is not a kind of link run ({', '.join(sorted(_LINK_KINDS))})")
    sub = _LINK_KINDS[kind]
    if kind == "goose" and hasattr(_os, "geteuid") and _os.geteuid() != 0:
        # Checked here: without root the command line's goose ends the process (exit code 2).
        raise InputError("link goose: needs root (raw sockets and network namespaces; docs/link.md)")
    if kind == "attack":
        options = {**options, "attack": True}
    argv = ([sub] if sub else []) + _argv(options, _LINK_DURATIONS)
    d = _native.link(argv)
    return load(d) if d is not None else None


def compare(
    a: Union[str, "_os.PathLike[str]", Results],
    b: Union[str, "_os.PathLike[str]", Results],
    margin: float = 5.0,
    html: Union[None, str, "_os.PathLike[str]"] = None,
) -> "Any":
    """``lwcbench compare A B``: run B against run A group by group, through the same code as
    the CLI. Returns a pandas DataFrame, one row per group: ``cipher``, ``implementation``,
    ``scenario``, ``kiv``, ``size_bits``, ``a_median_ns``, ``b_median_ns``, ``ratio``
    (median B / median A), ``ratio_lo``/``ratio_hi`` (its 95 % CI), ``p`` (Mann–Whitney U)
    and ``verdict`` ("B faster"/"B slower" only when significant and outside ±``margin`` %,
    else "no change"; "only in A/B"). ``df.attrs["text"]`` is the CLI's table and
    ``df.attrs["warnings"]`` its warnings (a noisy machine); ``html`` also writes the page.

    >>> import tempfile
    >>> t = tempfile.mkdtemp()
    >>> a = lwcbench.run(cipher="ChaCha20", scenario="init", kiv="ss", reps=20, warmup=0, seed=1, out=t + "/a")
    >>> b = lwcbench.run(cipher="ChaCha20", scenario="init", kiv="ss", reps=20, warmup=0, seed=2, out=t + "/b")
    >>> df = lwcbench.compare(a, b, margin=50)
    >>> sorted(set(df["scenario"]))
    ['init']
    """
    import pandas as pd

    def path(x: Any) -> str:
        return _os.fspath(x.path if isinstance(x, Results) else x)

    if isinstance(margin, bool) or not isinstance(margin, (int, float)):
        raise InputError(f"margin: {margin!r} is not a percentage")
    c = _native.compare(path(a), path(b), float(margin), html=_os.fspath(html) if html is not None else None)
    df = pd.DataFrame(c["rows"], columns=[
        "cipher", "implementation", "scenario", "kiv", "size_bits", "a_median_ns", "b_median_ns", "ratio",
        "ratio_lo", "ratio_hi", "p", "verdict",
    ])
    df.attrs["text"] = c["text"]
    df.attrs["warnings"] = c["warnings"]
    return df


def _call(verb: str, **given: Any) -> List[str]:
    """How a call was made, for run.json's ``args``: the Python version and the call with the
    arguments given (not the interpreter's command line)."""
    shown = ", ".join(f"{k}={_os.fspath(v) if isinstance(v, _os.PathLike) else v!r}" for k, v in given.items()
                      if v is not None)
    return [f"python {_sys.version.split()[0]}", f"lwcbench.{verb}({shown})"]


def mcu(out: Union[str, "_os.PathLike[str]"], preset: str = "counts", *, no_build: bool = False,
        profiles: Union[str, Sequence[str]] = "Os,O3", force: bool = False, board: Optional[str] = None) -> Results:
    """``lwcbench mcu``: microcontroller cost without a board (flash/RAM tables, and with
    ``preset="counts"`` emulated cycle counts), through the same code as the CLI. Needs the
    checkout's cross toolchains and venv (``scripts/setup.sh --test``); without them it raises
    :class:`InputError` saying what to install. ``board`` (a board of data/boards.toml) is
    ``--board``: only that board's target, counted with its profile. Returns the
    :class:`Results` of ``out``. The subcommands are :func:`mcu_nist_lwc` and
    :func:`mcu_check_board`.

    >>> import tempfile
    >>> lwcbench.mcu(tempfile.mkdtemp(), profiles="O2")
    Traceback (most recent call last):
    lwcbench.InputError: --profiles: unknown profile "O2" (expected Os, O3 or Os,O3)
    """
    argv = ["--out", _os.fspath(out), "--preset", str(preset)] + _argv(
        {"no_build": no_build, "profiles": profiles, "force": force, "board": board})
    _native.mcu(argv, _call("mcu", out=out, preset=preset, no_build=no_build or None, profiles=profiles,
                            force=force or None, board=board))
    return load(out)


def mcu_nist_lwc(out: Union[str, "_os.PathLike[str]"], board: str, *, primitive: Optional[str] = None,
                 config: Optional[str] = None, impl: Optional[str] = None, cells: Optional[str] = None,
                 max_insns: Optional[int] = None, jobs: Optional[int] = None, force: bool = False) -> Results:
    """``lwcbench mcu nist-lwc``: a published NIST LWC microcontroller table reproduced in
    emulation (docs/board.md), through the same code as the CLI. ``board`` is ``"mkrzero"``,
    ``"nano33ble"``, ``"due"`` or ``"nodemcuv2"``; ``primitive`` (``"aead"``, ``"hash"``),
    ``config`` (``"os"``, ``"o1"``, ``"o2"``, ``"o3"``), ``impl`` (a glob such as
    ``"armv*"``), ``cells`` (``"all"``, ``"slope"``), ``max_insns``, ``jobs`` and ``force`` are
    the options of the same names; left at None they take the CLI's defaults (aead, o2, ``*``,
    all, 300,000,000, 2). Needs the NIST LWC tree (``$LWCBENCH_NIST_LWC``), the ARM/Xtensa
    toolchains and the checkout's venv (``scripts/setup.sh --test``); builds and emulates for
    minutes. Returns the :class:`Results` of ``out``: ``tables["nist_lwc_cells"]`` and
    ``tables["nist_lwc_impls"]``. Bad input raises :class:`InputError` with the CLI's message.

    >>> r = lwcbench.mcu_nist_lwc("nist-mkrzero", "mkrzero", impl="ascon/ascon128v12/ref", cells="slope")  # doctest: +SKIP
    >>> r.tables["nist_lwc_cells"][["cell", "published_cycles", "emulated_cycles", "error_pct"]]  # doctest: +SKIP
    >>> import tempfile
    >>> lwcbench.mcu_nist_lwc(tempfile.mkdtemp(), "uno")
    Traceback (most recent call last):
    lwcbench.InputError: mcu: invalid value 'uno' for '--board <BOARD>'
    """
    # "--out=PATH": a path starting with "-" stays a value
    argv = ["nist-lwc", f"--out={_os.fspath(out)}"] + _argv({
        "board": board, "primitive": primitive, "config": config, "impl": impl, "cells": cells,
        "max_insns": max_insns, "jobs": jobs, "force": force})
    _native.mcu(argv, _call("mcu_nist_lwc", out=out, board=board, primitive=primitive, config=config, impl=impl,
                            cells=cells, max_insns=max_insns, jobs=jobs, force=force or None))
    return load(out)


# The columns of mcu_check_board's rows, in the CLI table's order.
_CHECK_BOARD_COLS = [
    "cipher", "implementation", "phase", "from", "board_16_bytes", "emulated_16_bytes", "error_16_bytes_pct",
    "board_128_bytes", "emulated_128_bytes", "error_128_bytes_pct", "board_per_byte", "emulated_per_byte",
    "error_per_byte_pct",
]


def mcu_check_board(run: Union[str, "_os.PathLike[str]", Results], board: str, *,
                    emulated: Union[None, str, "_os.PathLike[str]"] = None) -> "pandas.DataFrame":
    """``lwcbench mcu check-board``: a collected board run beside the emulated cycles of the
    same code (docs/board.md, "Checking the model"), through the same code as the CLI; prints
    nothing. ``run`` is a run directory of :func:`collect` (its ``board-log.txt``), its
    :class:`Results`, or a board log; ``board`` a board of data/boards.toml; ``emulated`` a
    table with the columns of data/emulated-cycles.csv (default: that file, built in).

    Returns a pandas DataFrame, one row per cipher compared: ``cipher``, ``implementation``,
    ``phase`` (``keystream``/``encrypt``), ``from`` (``"counter"``: the board's cycle counter,
    ``"clock"``: ns/op × the board's clock), board and emulated cycles per message of 16 and
    128 bytes (``board_16_bytes``, ``emulated_16_bytes``, ``board_128_bytes``,
    ``emulated_128_bytes``), per byte (``board_per_byte``, ``emulated_per_byte``: (c128 − c16)
    / 112) and the emulation's errors in % (``error_16_bytes_pct``, ``error_128_bytes_pct``,
    ``error_per_byte_pct``; NaN where the board figure is not positive).
    ``df.attrs["text"]`` is the CLI's output, ``df.attrs["missing"]`` the ciphers without an
    emulated counterpart, ``df.attrs["notes"]`` the differences between the two builds. Bad
    input raises :class:`InputError` with the CLI's message (it names the option or file).

    >>> df = lwcbench.mcu_check_board("results/pico", "rp2040")  # doctest: +SKIP
    >>> df[["cipher", "phase", "board_per_byte", "emulated_per_byte", "error_per_byte_pct"]]  # doctest: +SKIP
    >>> import tempfile
    >>> lwcbench.mcu_check_board(tempfile.mkdtemp(), board="nope")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    lwcbench.InputError: --board: 'nope' is not a board of data/boards.toml (...)
    """
    import pandas as pd

    path = run.path if isinstance(run, Results) else run
    # options first, then "--": a run path starting with "-" stays the positional RUN
    argv = [f"--board={board}"] + ([f"--emulated={_os.fspath(emulated)}"] if emulated is not None else [])
    argv += ["--", _os.fspath(path)]
    c = _native.mcu_check_board(argv)
    df = pd.DataFrame(c["rows"], columns=_CHECK_BOARD_COLS)
    for col in _CHECK_BOARD_COLS[4:]:
        df[col] = df[col].astype("float64")
    df.attrs["text"] = c["text"]
    df.attrs["missing"] = c["missing"]
    df.attrs["notes"] = c["notes"]
    return df


def collect(from_log: Union[None, str, "_os.PathLike[str]"] = None, *, port: Optional[str] = None,
            out: Union[None, str, "_os.PathLike[str]"] = None, force: bool = False, **options: Any) -> Results:
    """``lwcbench collect``: a board's benchmark lines (docs/board.md) from a saved log
    (``from_log``) or a serial ``port`` into the usual result files, through the same code
    as the CLI; returns their :class:`Results`. Further options as on the command line in
    Python spelling (``baud=115200``, ``timeout=900``, ``allow_truncated=True``,
    ``power_from_log=...``; a ``timedelta`` for ``timeout`` is taken in seconds).

    >>> lwcbench.collect()
    Traceback (most recent call last):
    lwcbench.InputError: collect: the following required arguments were not provided:
    """
    if isinstance(options.get("timeout"), _dt.timedelta):
        options["timeout"] = options["timeout"].total_seconds()
    argv = _argv({"from_log": from_log, "port": port, "out": out, "force": force, **options})
    return load(_native.collect(argv, _call("collect", from_log=from_log, port=port, out=out, force=force or None,
                                            **options)))


def vectors_dir() -> Optional[str]:
    """The shared official-vector folder :func:`verify` would use, or None.

    >>> import os
    >>> v = lwcbench.vectors_dir()
    >>> v is None or os.path.isdir(v)
    True
    """
    return _native.vectors_dir()
