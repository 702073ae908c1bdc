#!/usr/bin/env bash
# Runs every test: unit and integration tests of all crates (release build: the cipher tests
# push megabytes of keystream), then the CLI's own verification and a smoke benchmark.
set -euo pipefail
cd "$(dirname "$0")/.."

cargo test --workspace --release
./target/release/lwcbench verify
./target/release/lwcbench run --preset quick --out target/smoke-run --force --quiet
test -s target/smoke-run/samples.csv && test -s target/smoke-run/summary.csv && test -s target/smoke-run/run.json
echo "test.sh: all tests passed"
