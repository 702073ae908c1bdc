#!/usr/bin/env bash
# Runs every test. Expects ./scripts/setup.sh --test to have run.
#  1. unit and integration tests of all Rust crates (release: the cipher tests push megabytes)
#  2. lwcbench verify: every known-answer test and cross-check, official vectors included
#  3. a smoke benchmark through the CLI, checking the result files exist
#  4. the Python package (bindings, loader, figures) and the HTML report in headless Chromium
#  5. microcontroller cross-builds (Cortex-M0+, M4F, RV32IMC; C++ also for ESP8266), flash/RAM
#     tables and emulated instruction/cycle counts (mcu/)
set -euo pipefail
cd "$(dirname "$0")/.."

cargo test --workspace --release
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
CARGO_TARGET_DIR="$PWD/target/mcu" .venv/bin/python mcu/run.py --out target/mcu-run --profiles Os
test -s target/mcu-run/mcu_sizes.csv && test -s target/mcu-run/mcu_counts.csv
echo "test.sh: all tests passed"
