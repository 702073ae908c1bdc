"""lwcbench from Python: the verified cipher implementations, the benchmark engine, a pandas
loader for its result files and publication figures.

    >>> import lwcbench
    >>> run_dir = lwcbench.run(preset="quick")          # measure (Rust engine, GIL released)
    >>> res = lwcbench.load(run_dir)                     # pandas DataFrames
    >>> from lwcbench import plots
    >>> plots.boxplot_time(res, scenario="full", path="full.pdf")

The functions here are thin wrappers over the Rust crates (``lwcbench._native``); all cipher
code, measurement and statistics live there.
"""
from __future__ import annotations

import os
import re
import sys
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Union

from . import _native
from .results import Results, ResultsError, load, load_energy

__version__ = _native.__version__
__all__ = [
    "ciphers", "presets", "keystream", "encrypt", "decrypt", "run", "verify", "report", "vectors_dir", "choose",
    "load", "load_energy", "Results", "ResultsError", "__version__",
]

BytesLike = Union[bytes, bytearray, memoryview]


def ciphers(frame: bool = False):
    """Every registered implementation with its metadata, in listing order: a list of dicts,
    or a pandas DataFrame with ``frame=True``.

    Keys: ``id`` ("Name/impl"), ``cipher``, ``implementation``, ``family`` (stream, block,
    aead), ``key_bits``, ``iv_bits``, ``block_bits``, ``tag_bits``, ``state_bytes``,
    ``origin``, ``language``, ``bit_order``, ``bit_granular``, ``note``.
    """
    rows = _native.ciphers()
    if frame:
        import pandas as pd

        return pd.DataFrame(rows)
    return rows


def presets() -> List[Dict[str, Any]]:
    """The named, reproducible experiments (name, about, reps, warmup)."""
    return _native.presets_list()


def keystream(cipher_id: str, key: BytesLike, iv: BytesLike, nbits: int) -> bytes:
    """The first ``nbits`` keystream bits of a stream cipher, packed into ``ceil(nbits/8)``
    bytes in the cipher's bit order (unused bits of a partial last byte are zero).

    ``cipher_id`` is "Name/impl" or a bare name (its first implementation). Wrong key/IV
    lengths raise ``ValueError`` with the cipher's own error text.
    """
    if nbits < 0:
        raise ValueError(f"nbits must be >= 0, got {nbits}")
    return _native.keystream(cipher_id, bytes(key), bytes(iv), int(nbits))


def encrypt(cipher_id: str, key: BytesLike, iv: BytesLike, data: BytesLike, ad: BytesLike = b"") -> bytes:
    """Encrypt ``data``.

    * stream cipher: ``data`` XOR keystream;
    * AEAD: ciphertext followed by the tag (``iv`` is the nonce, ``ad`` the associated data);
    * block cipher: raw ECB over whole blocks (``iv`` must be empty); other lengths raise.
    """
    return _native.encrypt(cipher_id, bytes(key), bytes(iv), bytes(data), bytes(ad))


def decrypt(cipher_id: str, key: BytesLike, iv: BytesLike, data: BytesLike, ad: BytesLike = b"") -> bytes:
    """Inverse of :func:`encrypt`. For an AEAD, ``data`` is ciphertext followed by the tag; a
    tag that does not verify raises ``ValueError`` and no plaintext is returned."""
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
        return [t] if re.fullmatch(r"<?[sSrR],[sSrR]>?", t) else _names(t)
    return [str(x).strip() for x in v]


def _size_bits(s: Union[int, str]) -> int:
    """1024 or "1024" bits; "16B", "64KiB", "1MiB" bytes (as ``lwcbench run --sizes``)."""
    if isinstance(s, bool):
        raise ValueError(f"sizes: {s!r} is not a size")
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
        raise ValueError(f"sizes: {s!r} is not a size (bits, or bytes with B/KiB/MiB)")
    return int(t) * m


def _material(name: str, v: Union[None, str, BytesLike]) -> Optional[bytes]:
    if v is None:
        return None
    if isinstance(v, str):
        try:
            return bytes.fromhex(v)
        except ValueError as e:
            raise ValueError(f"{name}: not hex ({e})") from None
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
    out: Union[None, str, "os.PathLike[str]"] = None,
    force: bool = False,
    *,
    key: Union[None, str, BytesLike] = None,
    iv: Union[None, str, BytesLike] = None,
    min_sample_us: Optional[float] = None,
    progress: Union[None, bool, Callable[[int, int, str], Any]] = None,
    all: bool = False,  # noqa: A002 - the CLI's --all
    payload: Optional[str] = None,
    dataset: Union[None, str, "os.PathLike[str]"] = None,
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
    energy_from: Union[None, str, "os.PathLike[str]"] = None,
    video: Union[None, str, "os.PathLike[str]"] = None,
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
    unless ``force=True``. Invalid input raises ``ValueError`` before anything is measured.

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
    write several directories or re-execute the command line) and raise ``ValueError`` here.

    ``progress=True`` prints a progress line to stderr; a callable is called as
    ``progress(done_samples, total_samples, group_label)`` at most every 200 ms and once at
    the end. If it raises, the run still completes and writes its files, then the exception
    propagates.
    """
    if isinstance(sizes, (int, str)):
        sizes = [sizes]
    size_list = [_size_bits(p) for s in (sizes or []) for p in (s.split(",") if isinstance(s, str) else [s])]
    if any(s < 0 for s in size_list):
        raise ValueError(f"sizes: negative size in {size_list}")
    given = {
        "preset": preset, "cipher": cipher, "impl": impl, "scenario": scenario, "sizes": sizes,
        "kiv": kiv, "reps": reps, "warmup": warmup, "seed": seed, "out": os.fspath(out) if out is not None else None,
        "force": force or None, "min_sample_us": min_sample_us, "all": all or None, "payload": payload,
        "dataset": os.fspath(dataset) if dataset is not None else None, "channels": channels,
        "encoding": encoding if encoding != "float32" else None, "byte_order": byte_order if byte_order != "be" else None,
        "layout": layout if layout != "interleaved" else None, "readings": readings,
        "key": key if key is None or isinstance(key, str) else bytes(key).hex(),
        "iv": iv if iv is None or isinstance(iv, str) else bytes(iv).hex(),
        "dataset_encoding": dataset_encoding if dataset_encoding != "utf8" else None,
        "power_profile": power_profile, "watts": watts, "board": board,
        "energy_from": os.fspath(energy_from) if energy_from is not None else None,
        "video": os.fspath(video) if video is not None else None, "frames": frames, "engine": engine,
        "weights": weights, "budget": budget, "repeat": repeat if repeat != 1 else None,
        "counter": counter if counter != "time" else None, "twin": twin,
    }
    call = "lwcbench.run(" + ", ".join(f"{k}={v!r}" for k, v in given.items() if v is not None) + ")"
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
        out=os.fspath(out) if out is not None else None,
        force=bool(force),
        key=_material("key", key),
        iv=_material("iv", iv),
        min_sample_us=min_sample_us,
        call=[f"python {sys.version.split()[0]}", call],
        progress=_stderr_progress if progress is True else (progress or None),
        all=bool(all),
        payload=payload,
        dataset=os.fspath(dataset) if dataset is not None else None,
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
        **({"energy_from": os.fspath(energy_from)} if energy_from is not None else {}),
        video=os.fspath(video) if video is not None else None,
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
    sys.stderr.write(f"\rlwcbench: {done}/{total} samples ({100 * done / max(total, 1):.0f} %)  {label[:60]:<60}{end}")
    sys.stderr.flush()


def verify(cipher: Union[None, str, Sequence[str]] = None, vectors: Union[None, str, "os.PathLike[str]"] = None) -> List[Dict[str, Any]]:
    """Run the known-answer tests and cross-checks (as ``lwcbench verify``).

    Returns one dict per check: ``id``, ``what``, ``passed`` (vectors that matched),
    ``failures`` (one line per mismatch), ``skipped`` (shared vector folder absent) and
    ``ok``. The official vectors are found as by the CLI (``$LWCBENCH_VECTORS``,
    ``../shared/vectors``) unless ``vectors`` names the folder.
    """
    return _native.verify(cipher=_names(cipher), vectors=os.fspath(vectors) if vectors is not None else None)


def report(run_dir: Union[str, "os.PathLike[str]"]) -> str:
    """(Re)write ``report.html`` and ``summary.md`` of a run directory, as ``lwcbench report
    DIR``; returns the path of the HTML report."""
    return _native.report(os.fspath(run_dir))


def choose(
    board: str,
    radio: str,
    interval: str,
    payload: str = "16B",
    flash: Optional[str] = None,
    ram: Optional[str] = None,
    security: int = 128,
    tag: int = 128,
    require: Optional[str] = None,
    weights: Optional[str] = None,
    lifetime: str = "10y",
    allow_provisional: bool = False,
    allow_variable_time: bool = False,
    chemistry: str = "alkaline-AA",
    battery_mah: float = 2400.0,
    battery_v: float = 3.0,
    region: Optional[str] = None,
    sleep_ua: Optional[float] = None,
    active_ma: Optional[float] = None,
    boards: Union[None, str, "os.PathLike[str]"] = None,
    radios: Union[None, str, "os.PathLike[str]"] = None,
    dtim: Optional[int] = None,
    out: Union[None, str, "os.PathLike[str]"] = None,
    force: bool = False,
) -> Dict[str, Any]:
    """``lwcbench choose`` through the same resolver as the CLI: the ranked, explained answer
    for a board, a radio and a requirement, as the dict ``lwcbench choose --json`` prints
    (schema ``lwcbench-choose/2``, docs/choose.md). Arguments are the CLI's options as strings
    (``interval="10m"``, ``payload="16B"``, ``flash="32KiB"``, ``weights="energy=3,latency=1"``,
    ``require="reviewed"``); ``tag`` is 64, 96 or 128 bits. ``region`` (``"EU868"``),
    ``sleep_ua``, ``active_ma``, ``boards``/``radios`` (your board and radio files in the data/
    schema) and ``dtim`` (1, 3 or 10) are ``--region``, ``--sleep-ua``, ``--active-ma``,
    ``--boards``, ``--radios`` and ``--dtim``.
    ``out`` also writes choose.json, choose.html and choose.txt there, all or none (``force``
    replaces an earlier answer, as ``--force``). Bad input raises
    ValueError with the CLI's message (it names the option)."""
    import json

    text = _native.choose(
        board, radio, interval, payload=payload, flash=flash, ram=ram, security=int(security), tag=int(tag),
        require=require, weights=weights, lifetime=lifetime, allow_provisional=bool(allow_provisional),
        allow_variable_time=bool(allow_variable_time), chemistry=chemistry,
        battery_mah=float(battery_mah), battery_v=float(battery_v), region=region,
        sleep_ua=None if sleep_ua is None else float(sleep_ua),
        active_ma=None if active_ma is None else float(active_ma),
        boards=os.fspath(boards) if boards is not None else None,
        radios=os.fspath(radios) if radios is not None else None,
        dtim=None if dtim is None else int(dtim),
        out=os.fspath(out) if out is not None else None,
        force=bool(force),
    )
    return json.loads(text)


def vectors_dir() -> Optional[str]:
    """The shared official-vector folder :func:`verify` would use, or None."""
    return _native.vectors_dir()
