#!/usr/bin/env bash
# Install what mcu/ needs, idempotently (CI and fresh machines): Rust targets, Debian
# cross toolchains, QEMU's Xtensa system emulator (the LX106 route, mcu/lx106.py), and the
# Python venv with Unicorn/capstone. Re-running is a quick no-op.
#   MCU_VENV   venv path (default: the project's .venv beside mcu/)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
venv="${MCU_VENV:-$here/../.venv}"

targets=(thumbv6m-none-eabi thumbv7em-none-eabihf riscv32imc-unknown-none-elf)
installed="$(rustup target list --installed)"
missing=()
for t in "${targets[@]}"; do grep -qx "$t" <<<"$installed" || missing+=("$t"); done
if ((${#missing[@]})); then rustup target add "${missing[@]}"; fi

# libstdc++-arm-none-eabi-newlib: the Arm C++ standard library (newlib) for C++ sources
# among the NIST LWC implementations (mcu/nistlwc.py)
pkgs=(gcc-arm-none-eabi libnewlib-arm-none-eabi libstdc++-arm-none-eabi-newlib binutils-arm-none-eabi
      gcc-riscv64-unknown-elf picolibc-riscv64-unknown-elf gcc-xtensa-lx106 qemu-system-misc)
need=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || need+=("$p")
done
if ((${#need[@]})); then
  # the project's apt helper: a partly failed index (a foreign architecture's mirror mid-sync)
  # is a warning, a package it leaves missing fails the install by name
  APT_TAG="mcu setup"
  . "$here/../scripts/ci/apt.sh"
  apt_update
  apt_install "${need[@]}"
fi

if [ ! -x "$venv/bin/python" ]; then python3 -m venv "$venv"; fi
if ! "$venv/bin/python" -c 'import unicorn, capstone, elftools, pytest' 2>/dev/null; then
  "$venv/bin/pip" install -q -r "$here/requirements.txt"
fi
echo "mcu setup ok (venv $venv)"
