#!/usr/bin/env python3
"""The project's own C/C++ ciphers and a bounded set of NIST LWC C implementations as ESP8266
(Xtensa LX106) images: built with xtensa-lx106-elf-gcc (the board's flags, data/boards.toml
[board.esp8266.lx106]), run in QEMU's lx106 CPU, timed with the board's LX106 cycle model
(mcu/lx106.py). Rust has no upstream LX106 target, so no Rust image runs here.

Images (`IMAGES`):
* the C++ DRACO of cpp/draco, `ref` and `fast` (firmware/arduino/lwcbench/draco.cpp is the same
  code), and the Arduino sketch's own Trivium (firmware/arduino/lwcbench/trivium.cpp), through
  mcu/lx106/stream_harness.c: per bit count one timed init and one timed keystream call;
* this project's own portable C ChaCha20 and ChaCha20-Poly1305 (mcu/lx106/chacha, RFC 8439): the
  Poly1305 share of `lwcbench choose`'s stream + Poly1305 composition on the ESP8266;
* this project's own constant-time C AES-128-CCM and AES-128-GCM (mcu/lx106/aes; 12-byte nonce,
  16-byte tag) and the same ccm.c as CCM* (IEEE 802.15.4: 13-byte nonce, 16-, 8- or 4-byte MIC),
  through mcu/lx106/harness.c like the NIST API images;
* NIST LWC C implementations from the shared tree (Ascon-128 v1.2 ref / bi32 / bi32_lowsize,
  TinyJAMBU-128 ref / opt, Xoodyak XKCP-plain-ua) and the own ChaCha20-Poly1305 (NIST API)
  through mcu/lx106/harness.c: one timed crypto_aead_encrypt per message length, empty
  associated data. The NIST API keys every call, so these have no init phase of their own
  (init 0 cycles).

Both harnesses make one untimed call first, so the figures are the steady state of a loop of
messages (warm). The ESP8266 runs this code from flash through its instruction cache, whose
geometry and refill time no reachable document gives: no cold (first-call) cost is modelled,
and the tables keep cold = warm for this board (data/emulated-cycles.csv says so).

Sizes: flash = text + rodata + data of the image minus its harness's baseline (-DLWC_NONE),
static RAM = data + bss minus the baseline's, stack = the painted depth minus the baseline's
(mcu/lx106/lx106_stack.h).

scripts/data/emulated-cycles.py and mcu-sizes.py write the committed rows from `measure_all`;
mcu/run.py (`lwcbench mcu --preset counts`) puts the same figures in mcu_counts.csv.
"""
from __future__ import annotations

import dataclasses
import pathlib

import lx106

REPO = lx106.MCU.parent
TARGET = "xtensa-lx106-elf"
PROFILE = "Os"
FLAGS = ["-Os"]
MAX_INSNS = 50_000_000


@dataclasses.dataclass(frozen=True)
class Image:
    cipher: str
    implementation: str
    image: str
    kind: str  # stream (keystream phase) | aead (encrypt phase)
    define: str = ""  # stream: the harness's cipher switch; own-C aead: a define of its sources
    sources: tuple = ()  # stream: repository paths
    nist: tuple = ()  # aead: (submission, variant, implementation) in the shared NIST LWC tree

    @property
    def phase(self) -> str:
        return "keystream" if self.kind == "stream" else "encrypt"


_CCM = ("mcu/lx106/aes/ccm.c", "mcu/lx106/aes/aes128.c")
IMAGES = [
    Image("DRACO", "cpp-ref", "draco_ref", "stream", "LWC_DRACO_REF", ("cpp/draco/draco.cpp",)),
    Image("DRACO", "cpp-fast", "draco_fast", "stream", "LWC_DRACO_FAST", ("cpp/draco/draco.cpp",)),
    # trivium_c.cpp includes the sketch's trivium.cpp with C linkage for the C harness
    Image("Trivium", "cpp-arduino", "trivium_arduino", "stream", "LWC_TRIVIUM",
          ("mcu/lx106/trivium_c.cpp", "firmware/arduino/lwcbench/trivium.cpp")),
    # this project's own portable C (mcu/lx106/chacha): on a board without Rust images, the
    # Poly1305 share of `lwcbench choose`'s stream + Poly1305 composition
    Image("ChaCha20", "c", "c_chacha20", "stream", "LWC_CHACHA20", ("mcu/lx106/chacha/chacha20poly1305.c",)),
    Image("ChaCha20-Poly1305", "c", "c_chacha20poly1305", "aead", sources=("mcu/lx106/chacha/chacha20poly1305.c",)),
    # this project's own constant-time C AES-128 (mcu/lx106/aes: no secret-indexed table), CCM
    # (SP 800-38C) and GCM (SP 800-38D), 12-byte nonce, 16-byte tag: the FIPS candidates here
    Image("AES-128-CCM", "c", "c_aes128ccm", "aead", sources=("mcu/lx106/aes/ccm.c", "mcu/lx106/aes/aes128.c")),
    Image("AES-128-GCM", "c", "c_aes128gcm", "aead", sources=("mcu/lx106/aes/gcm.c", "mcu/lx106/aes/aes128.c")),
    # the same ccm.c as CCM* (IEEE 802.15.4): 13-byte nonce, 16/8/4-byte MIC (api.h's switch)
    Image("AES-128-CCM*", "c", "c_aes128ccmstar", "aead", "LWC_CCM_STAR_MIC=16", _CCM),
    Image("AES-128-CCM*-8", "c", "c_aes128ccmstar8", "aead", "LWC_CCM_STAR_MIC=8", _CCM),
    Image("AES-128-CCM*-4", "c", "c_aes128ccmstar4", "aead", "LWC_CCM_STAR_MIC=4", _CCM),
    Image("Ascon-128", "nist-ref", "nist_ascon128v12_ref", "aead", nist=("ascon", "ascon128v12", "ref")),
    Image("Ascon-128", "nist-bi32", "nist_ascon128v12_bi32", "aead", nist=("ascon", "ascon128v12", "bi32")),
    Image("Ascon-128", "nist-bi32_lowsize", "nist_ascon128v12_bi32_lowsize", "aead",
          nist=("ascon", "ascon128v12", "bi32_lowsize")),
    Image("TinyJAMBU-128", "nist-ref", "nist_tinyjambu128v2_ref", "aead", nist=("tinyjambu", "tinyjambu128v2", "ref")),
    Image("TinyJAMBU-128", "nist-opt", "nist_tinyjambu128v2_opt", "aead", nist=("tinyjambu", "tinyjambu128v2", "opt")),
    Image("Xoodyak", "nist-XKCP-plain-ua", "nist_xoodyakround3_xkcp_plain_ua", "aead",
          nist=("xoodyak", "xoodyakround3", "XKCP-plain-ua")),
]


@dataclasses.dataclass
class Built:
    img: Image
    elf: pathlib.Path
    baseline: pathlib.Path


@dataclasses.dataclass
class Measured:
    img: Image
    init: dict  # message bits -> init cycles (0 for the NIST API)
    init_insns: dict  # message bits -> init instructions (0 for the NIST API)
    message: dict  # message bits -> cycles of the message phase
    events: dict  # message bits -> the model's event counts of the message phase
    output: dict  # message bits -> keystream / ciphertext + tag bytes
    flash: int
    ram_static: int
    stack: int


def _compile(srcs: list, flags: list, inc: list, odir: pathlib.Path) -> list:
    objs = []
    for s in srcs:
        o = odir / (s.name + ".o")
        r = lx106.compile_one(s, o, flags, inc)
        if r.returncode:
            raise lx106.Lx106Error(f"{s}: {r.stderr.strip()[-300:] or 'failed'}")
        objs.append(o)
    return objs


def _link(objs: list, elf: pathlib.Path, cxx: bool) -> pathlib.Path:
    r = lx106.link(objs, elf, cxx=cxx)
    if r.returncode:
        raise lx106.Lx106Error(f"link {elf.name}: {r.stderr.strip()[-300:]}")
    return elf


def build(img: Image, bm: lx106.BoardModel, outdir: pathlib.Path) -> Built:
    """The image and its harness's baseline (same harness, no cipher), with the board's flags."""
    flags = [*FLAGS, *bm.cflags]
    odir = outdir / img.image
    odir.mkdir(parents=True, exist_ok=True)
    libc = ["-isystem", str(lx106.LX / "libc" / "include"), "-I", str(lx106.LX)]
    if img.kind == "stream":
        srcs = [REPO / s for s in img.sources]
        inc = libc + [x for s in srcs for x in ("-I", str(s.parent))]
        # a source another one includes (trivium.cpp) is compiled once, through the includer
        objs = _compile(srcs[:1], flags, inc, odir)
        objs += _compile([lx106.LX / "stream_harness.c"], flags + [f"-D{img.define}"], inc, odir)
        cxx = any(s.suffix == ".cpp" for s in srcs)
        bdir = outdir / "baseline_stream"
        bdir.mkdir(parents=True, exist_ok=True)
        base = _compile([lx106.LX / "stream_harness.c"], flags + ["-DLWC_NONE"], libc, bdir)
        rt = lx106.runtime_objs(flags, outdir, cxx)
        elf = _link(objs + rt, odir / "image.elf", cxx)
        baseline = _link(base + lx106.runtime_objs(flags, outdir, cxx), bdir / "baseline.elf", cxx)
        return Built(img, elf, baseline)
    if img.nist:
        import lx106_nist
        import nistlwc
        root = nistlwc.shared_dir()
        row = nistlwc.Row(*img.nist, "os", None, {})
        elf, why, kind, _ = lx106_nist.build(root, row, bm, "os", outdir)
        if elf is None:
            raise lx106.Lx106Error(f"{row.key}: {why}")
        if kind != "c":
            raise lx106.Lx106Error(f"{row.key}: built as {kind}, not C")
    else:
        # own C with the NIST API (api.h, crypto_aead.h beside it): harness.c calls it directly
        srcs = [REPO / s for s in img.sources]
        inc = libc + ["-I", str(srcs[0].parent)]
        own = [f"-D{img.define}"] if img.define else []
        objs = _compile(srcs + [lx106.LX / "harness.c"], flags + ["-DLWC_DIRECT", *own], inc, odir)
        elf = _link(objs + lx106.runtime_objs(flags, outdir), odir / "image.elf", False)
    bdir = outdir / "baseline_aead"
    bdir.mkdir(parents=True, exist_ok=True)
    base = _compile([lx106.LX / "harness.c"], flags + ["-DLWC_NONE"], libc, bdir)
    baseline = _link(base + lx106.runtime_objs(flags, outdir), bdir / "baseline.elf", False)
    return Built(img, elf, baseline)


def _stack(tr: lx106.Trace, what: str) -> int:
    for line in tr.output.splitlines():
        f = line.split()
        if len(f) == 2 and f[0] == "stack" and f[1].isdigit():
            return int(f[1])
    raise lx106.Lx106Error(f"{what}: no stack line in the output")


def _sizes(b: Built) -> tuple:
    from run import section_sizes
    s, z = section_sizes(b.elf), section_sizes(b.baseline)
    return (s["text"] + s["rodata"] + s["data"] - z["text"] - z["rodata"] - z["data"],
            s["data"] + s["bss"] - z["data"] - z["bss"])


def _run(elf: pathlib.Path, cells: list, what: str) -> lx106.Trace:
    tr = lx106.trace(elf, cells, max_insns=MAX_INSNS, timeout=600.0 + len(cells) * MAX_INSNS / 200_000)
    if tr.error or tr.status != 0:
        raise lx106.Lx106Error(f"{what}: {tr.error or f'QEMU exit status {tr.status}'}")
    return tr


def measure(b: Built, bm: lx106.BoardModel, nbits=(128, 1024)) -> Measured:
    """Cycles of init and of the message phase at each bit count, the output, flash, RAM, stack."""
    img, t = b.img, bm.timing
    base = _run(b.baseline, [(0, 8)] if img.kind == "stream" else [(0, 1)], f"{img.image} baseline")
    init, init_insns, msg, evs, out = {}, {}, {}, {}, {}
    if img.kind == "stream":
        tr = _run(b.elf, [(0, n) for n in nbits], img.image)
        lines = [ln.split() for ln in tr.output.splitlines() if ln.startswith("ks ")]
        if len(lines) != len(nbits) or len(tr.regions) != 2 * len(nbits):
            raise lx106.Lx106Error(f"{img.image}: {len(lines)} results, {len(tr.regions)} regions for {len(nbits)}")
        for i, (n, f) in enumerate(zip(nbits, lines)):
            if int(f[1]) != n or int(f[2]) != 0:
                raise lx106.Lx106Error(f"{img.image}: {n} bits returned {f[2]}")
            iev = lx106.region_events(tr, tr.regions[2 * i])
            init[n], init_insns[n] = t.cycles(iev), iev["insns"]
            evs[n] = lx106.region_events(tr, tr.regions[2 * i + 1])
            msg[n] = t.cycles(evs[n])
            out[n] = bytes.fromhex(f[3]) if len(f) > 3 else b""
    else:
        if any(n % 8 for n in nbits):
            raise lx106.Lx106Error(f"{img.image}: AEAD messages are whole bytes")
        tr = _run(b.elf, [(0, n // 8) for n in nbits], img.image)
        got = {}
        for line in tr.output.splitlines():
            f = line.split()
            if len(f) >= 6 and f[0] == "cell":
                got[int(f[1])] = (int(f[4]), bytes.fromhex(f[6]) if len(f) > 6 else b"")
        if len(tr.regions) != len(nbits) or sorted(got) != list(range(len(nbits))):
            raise lx106.Lx106Error(f"{img.image}: {len(got)} results, {len(tr.regions)} regions for {len(nbits)}")
        for i, n in enumerate(nbits):
            rc, ct = got[i]
            if rc != 0:
                raise lx106.Lx106Error(f"{img.image}: encrypt of {n // 8} bytes returned {rc}")
            init[n] = init_insns[n] = 0
            evs[n] = lx106.region_events(tr, tr.regions[i])
            msg[n] = t.cycles(evs[n])
            out[n] = ct
    flash, ram = _sizes(b)
    stack = max(0, _stack(tr, img.image) - _stack(base, f"{img.image} baseline"))
    return Measured(img, init, init_insns, msg, evs, out, flash, ram, stack)


def available(images=None) -> tuple[list, list]:
    """(images that can be built here, (image, reason) for the others: a NIST one without the
    shared tree)."""
    import nistlwc
    ok, skipped = [], []
    for img in images or IMAGES:
        if img.nist:
            try:
                nistlwc.shared_dir()
            except nistlwc.Fail as e:
                skipped.append((img, str(e)))
                continue
        ok.append(img)
    return ok, skipped


def measure_all(outdir: pathlib.Path, board: str = "esp8266", images=None, nbits=(128, 1024)) -> list:
    """Every available image measured on the LX106 board (Measured, in IMAGES order)."""
    lx106.check_tools()
    bm = lx106.load_board(board)
    ok, _ = available(images)
    return [measure(build(img, bm, outdir), bm, nbits) for img in ok]
