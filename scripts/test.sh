#!/usr/bin/env bash
# Runs every test. Expects ./scripts/setup.sh --test to have run.
#  1. unit and integration tests of all Rust crates (release: the cipher tests push megabytes),
#     and a build check of the own no_std cipher crates for 64-bit ARM
#  2. lwcbench verify: every known-answer test and cross-check, official vectors included
#  3. a smoke benchmark through the CLI, checking the result files exist
#  4. the Python package (bindings, loader, figures) and the HTML report in headless Chromium
#  5. the PyCryptodome engine process (engine protocol) and its vectors
#  6. microcontroller cross-builds (Cortex-M0+, M4F, RV32IMC; C++ also for ESP8266), flash/RAM
#     tables and emulated instruction/cycle counts (mcu/, through `lwcbench mcu`)
#  7. board firmware: shared bench code, QEMU end-to-end (UART -> lwcbench collect -> report),
#     Pico build, Arduino sketch against the stand-in API (firmware/)
set -euo pipefail
cd "$(dirname "$0")/.."

# Style gate: one rustfmt.toml for every Rust workspace in the tree.
for m in Cargo.toml python/Cargo.toml firmware/Cargo.toml mcu/images/Cargo.toml mcu/hostref/Cargo.toml; do
  cargo fmt --all --manifest-path "$m" -- --check
done
cargo clippy --workspace --all-targets --release -- -D warnings
# No import cycle between the catalogue's modules (engine's count is printed, not yet gated).
python3 scripts/import-cycles.py --check crates/catalog
python3 scripts/import-cycles.py crates/engine
cargo test --workspace --release
# The own no_std cipher crates also build for 64-bit ARM (a Pi 4/5 class host): the x86-64
# SIMD paths must stay behind their cfg gates.
CARGO_TARGET_DIR="$PWD/target/aarch64" cargo check --release --target aarch64-unknown-none \
  -p lwcbench-core -p lwcbench-draco -p lwcbench-estream -p lwcbench-lightweight
./target/release/lwcbench verify
./target/release/lwcbench verify --engine pycryptodome
./target/release/lwcbench run --preset quick --out target/smoke-run --force --quiet
for f in samples.csv summary.csv run.json report.html; do
  test -s "target/smoke-run/$f" || { echo "test.sh: smoke run did not write $f" >&2; exit 1; }
done

LWCBENCH_BIN="$PWD/target/release/lwcbench" .venv/bin/python -m pytest -q python/tests tests/browser
.venv/bin/python -m pytest -q engines/pycryptodome
# Cross-built images: emulated keystream equals the host's, pinned instruction counts, tables.
CARGO_TARGET_DIR="$PWD/target/mcu" .venv/bin/python -m pytest -q mcu/tests
./target/release/lwcbench mcu --preset counts --profiles Os --no-build --force --out target/mcu-run
test -s target/mcu-run/mcu_sizes.csv && test -s target/mcu-run/mcu_counts.csv && test -s target/mcu-run/run.json
./target/release/lwcbench report target/mcu-run && test -s target/mcu-run/report.html
(cd firmware && CARGO_TARGET_DIR="$PWD/../target/fw" cargo test --release -p lwc-board-bench)
CARGO_TARGET_DIR="$PWD/target" LWCBENCH_BIN="$PWD/target/release/lwcbench" .venv/bin/python -m pytest -q firmware/tests
echo "test.sh: all tests passed"
