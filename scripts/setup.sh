#!/usr/bin/env bash
# Installs everything lwcbench needs on a Debian/Ubuntu machine, then builds the release binary.
# Safe to run repeatedly: it installs only what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

# Debian packages: C/C++ toolchain for the C++ implementations (cc crate), pkg-config.
pkgs=(build-essential pkg-config)
missing=()
for p in "${pkgs[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing Debian packages: ${missing[*]}"
  sudo_cmd=""
  [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${missing[@]}"
fi

# Rust toolchain: rustup if cargo is missing.
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
