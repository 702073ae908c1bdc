#!/usr/bin/env python3
"""Build every MCU image: the Rust images (mcu/images) for the three Rust targets and two
profiles, and the C++ DRACO (cpp/draco) for Cortex-M0+, RV32IMC and the ESP8266 (LX106).

Artifacts go to $CARGO_TARGET_DIR (default: <repo>/target/mcu):
  <dir>/<triple>/<profile>/<image>           Rust images (cargo)
  <dir>/cpp/<target>/<image>.elf             C++ images linked with mcu/cpp/harness.c
  <dir>/cpp/<target>/draco.o, draco_<v>.o    C++ object, and per variant the object after
                                             section garbage collection (`ld -r --gc-sections`)

`build.py` (no argument) builds everything; one cargo invocation per profile builds all
three targets (cargo serializes, so never two builds at once). Re-running is cheap.
"""
from __future__ import annotations

import dataclasses
import json
import os
import pathlib
import subprocess
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import boardfile  # noqa: E402

MCU = pathlib.Path(__file__).resolve().parent
REPO = MCU.parent
IMAGES = MCU / "images"

# The targets and their toolchains: [target.TRIPLE] tables of data/boards.toml.
_TARGETS = boardfile.load_targets()
RUST_TARGETS = [t.triple for t in _TARGETS.values() if t.rust]
PROFILES = {"Os": "release", "O3": "release-o3"}  # report name -> cargo profile


@dataclasses.dataclass(frozen=True)
class RustImage:
    name: str  # binary in mcu/images/src/bin
    cipher: str
    implementation: str
    kind: str = "stream"  # stream | block | aead (what `lwc_keystream` does: mcu/README.md)


def _catalogue_images() -> list[RustImage]:
    """The images of the catalogue: mcu/images.json, generated from the catalogue entries'
    `mcu_image` (crates/catalog/src/mcu_glue.rs, with the image sources; a catalog test keeps it equal)."""
    rows = json.loads((MCU / "images.json").read_text())
    return [RustImage(r["image"], r["cipher"], r["implementation"], r["kind"]) for r in rows]


# Every implementation that builds for no_std targets and has an image (own stream ciphers, own
# block ciphers and AEADs, and the RustCrypto crates of the catalogue through mcu/images/src/rc.rs).
RUST_IMAGES = _catalogue_images()
BASELINE = "baseline"


@dataclasses.dataclass(frozen=True)
class CppTarget:
    name: str  # also the emulator target key where emulable
    core: str
    cxx: str
    cc: str
    arch_flags: tuple
    libc_flags: tuple  # headers / C library (for compiler-emitted memcpy/memset)
    libs: tuple
    emulable: bool


CPP_TARGETS = [CppTarget(t.triple, t.core, t.cpp.cxx, t.cpp.cc, t.cpp.arch_flags, t.cpp.libc_flags, t.cpp.libs,
                         t.emulable) for t in _TARGETS.values() if t.cpp]
CPP_FLAGS = ("-Os", "-ffunction-sections", "-fdata-sections", "-fno-exceptions", "-fno-rtti")
CPP_VARIANTS = {"draco_ref": ("DRACO", "cpp-ref", "LWC_REF", "draco_ref"),
                "draco_fast": ("DRACO", "cpp-fast", "LWC_FAST", "draco_fast")}


def target_dir() -> pathlib.Path:
    return pathlib.Path(os.environ.get("CARGO_TARGET_DIR") or REPO / "target" / "mcu")


def rust_elf(triple: str, profile: str, image: str) -> pathlib.Path:
    return target_dir() / triple / PROFILES[profile] / image


def cpp_dir(target: str) -> pathlib.Path:
    return target_dir() / "cpp" / target


def _run(cmd, **kw):
    r = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, **kw)
    if r.returncode != 0:
        sys.stderr.write(r.stdout + r.stderr)
        raise SystemExit(f"command failed ({r.returncode}): {' '.join(map(str, cmd))}")
    return r


def build_rust(profiles=("Os", "O3"), quiet=True) -> None:
    for p in profiles:
        cmd = ["cargo", "build", "--profile", PROFILES[p], "--bins"]
        for t in RUST_TARGETS:
            cmd += ["--target", t]
        if quiet:
            cmd.append("--quiet")
        env = dict(os.environ, CARGO_TARGET_DIR=str(target_dir()))
        _run(cmd, cwd=IMAGES, env=env)


AD_ENTRY_DIR = "ad-entry"  # under target_dir(): the AEAD images with `lwc_encrypt_ad`


def rust_ad_elf(triple: str, image: str) -> pathlib.Path:
    """An AEAD image built with the `ad-entry` feature (Os): the measured image's code plus the
    entry point with associated data that the official vectors need."""
    return target_dir() / AD_ENTRY_DIR / triple / PROFILES["Os"] / image


def build_rust_ad_entry(images, quiet=True) -> None:
    """The named AEAD images with the `ad-entry` feature, for every Rust target (Os), in a target
    directory of their own so that the measured images are not rebuilt with it."""
    cmd = ["cargo", "build", "--profile", PROFILES["Os"], "--features", "ad-entry"]
    for im in images:
        cmd += ["--bin", im]
    for t in RUST_TARGETS:
        cmd += ["--target", t]
    if quiet:
        cmd.append("--quiet")
    env = dict(os.environ, CARGO_TARGET_DIR=str(target_dir() / AD_ENTRY_DIR))
    _run(cmd, cwd=IMAGES, env=env)


def build_cpp() -> None:
    src = REPO / "cpp" / "draco" / "draco.cpp"
    harness = MCU / "cpp" / "harness.c"
    ld = IMAGES / "lwc.ld"
    for t in CPP_TARGETS:
        d = cpp_dir(t.name)
        d.mkdir(parents=True, exist_ok=True)
        obj = d / "draco.o"
        _run([t.cxx, *t.arch_flags, *t.libc_flags, *CPP_FLAGS, "-std=c++17", "-c", src, "-o", obj])
        for v, (_, _, define, sym) in CPP_VARIANTS.items():
            # object-level size of the variant: keep only what init + keystream reach
            _run([t.cxx, *t.arch_flags, "-nostdlib", "-r", "-Wl,--gc-sections", f"-Wl,-u,{sym}_init",
                  f"-Wl,-u,{sym}_keystream_bits", "-o", d / f"{v}.o", obj])
        for v, define in [(k, x[2]) for k, x in CPP_VARIANTS.items()] + [(BASELINE, "LWC_NONE")]:
            h = d / f"harness_{v}.o"
            _run([t.cc, *t.arch_flags, *t.libc_flags, *[f for f in CPP_FLAGS if f != "-fno-rtti"],
                  "-I", REPO / "cpp" / "draco", "-D", define, "-c", harness, "-o", h])
            objs = [h] if v == BASELINE else [h, obj]
            _run([t.cxx, *t.arch_flags, *t.libc_flags, *CPP_FLAGS, "-nostdlib", "-nostartfiles",
                  "-Wl,--gc-sections", f"-T{ld}", *objs, *t.libs, "-o", d / f"{v}.elf"])


def build_all(profiles=("Os", "O3")) -> None:
    build_rust(profiles)
    build_cpp()


if __name__ == "__main__":
    build_all()
    print(f"built into {target_dir()}")
