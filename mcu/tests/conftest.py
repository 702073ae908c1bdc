"""Shared fixtures for mcu/tests: build the images (profile Os) and the host oracle once."""
from __future__ import annotations

import os
import pathlib
import subprocess
import sys

import pytest

MCU = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(MCU))

import build  # noqa: E402


@pytest.fixture(scope="session")
def built():
    """All Os images (Rust for three targets, C++ for three) — a no-op when up to date."""
    build.build_rust(("Os",))
    build.build_cpp()
    return build


@pytest.fixture(scope="session")
def hostref():
    """Path of the host (x86-64) keystream oracle built from mcu/hostref."""
    env = dict(os.environ, CARGO_TARGET_DIR=str(build.target_dir()))
    subprocess.run(["cargo", "build", "--release", "--quiet", "--manifest-path",
                    str(MCU / "hostref" / "Cargo.toml")], check=True, env=env)
    exe = build.target_dir() / "release" / "lwc-mcu-hostref"
    assert exe.exists(), exe

    def run(image: str, key: bytes, iv: bytes, nbits: int) -> bytes:
        out = subprocess.run([str(exe), image, key.hex(), iv.hex(), str(nbits)], check=True,
                             capture_output=True, text=True).stdout.strip()
        return bytes.fromhex(out)

    return run
