#!/usr/bin/env bash
# Installs what lwcbench needs on a Debian/Ubuntu machine and builds the release binary.
#   ./scripts/setup.sh          the tool itself (C/C++ toolchain, release build)
#   ./scripts/setup.sh --test   also everything the test suite needs: Chromium (report test),
#                               cross compilers and rustup targets (microcontroller builds),
#                               and the Python virtual environment .venv with the lwcbench
#                               package, pytest, Playwright (driving Debian's Chromium), Unicorn
# Safe to run repeatedly: it installs only what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
want_test=0
[ "${1:-}" = "--test" ] && want_test=1

pkgs=(build-essential pkg-config)
pkgs+=(libssl-dev libgcrypt20-dev libwolfssl-dev)  # AES libraries: docs/aes-libraries.md
if ((want_test)); then
  pkgs+=(chromium python3-venv)
fi
missing=()
for p in "${pkgs[@]}"; do
  # python3-venv is only needed where the interpreter lacks the venv module
  [ "$p" = python3-venv ] && python3 -c 'import venv, ensurepip' 2>/dev/null && continue
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing Debian packages: ${missing[*]}"
  sudo_cmd=""
  [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if ! command -v cargo >/dev/null 2>&1; then
  if [ -x "$HOME/.cargo/bin/cargo" ]; then
    export PATH="$HOME/.cargo/bin:$PATH"
  else
    echo "setup: cargo not found; install Rust with rustup (https://rustup.rs) and re-run" >&2
    exit 1
  fi
fi

cargo build --release -p lwcbench
echo "setup: built target/release/lwcbench"

if ((want_test)); then
  [ -x .venv/bin/python ] || python3 -m venv .venv
  .venv/bin/pip install --quiet --upgrade pip
  # The Python package is built from the Rust crates with maturin (PyO3).
  .venv/bin/pip install --quiet './python[test]' playwright pillow
  # Rust targets, cross compilers (ARM, RISC-V, Xtensa) and Unicorn/capstone for mcu/.
  MCU_VENV="$PWD/.venv" bash mcu/setup.sh
  echo "setup: test environment ready (.venv)"
fi
