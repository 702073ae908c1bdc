#!/usr/bin/env bash
# Regenerate everything derived from data/boards.toml (CONTRIBUTING.md, "Adding a board"):
#   1. data/board-power.csv and the board tables of docs/metrics.md and mcu/README.md
#      (the bless run of crates/data's test generated_files_follow_boards_toml);
#   2. data/emulated-cycles.csv: every Rust image emulated on every board with power figures
#      (scripts/data/emulated-cycles.py; arguments are passed on, e.g. --no-build).
# The CLI's --board help and errors list the rows of data/board-power.csv, so the next build
# has them. Needs the mcu toolchains for step 2 (mcu/setup.sh).
set -euo pipefail
cd "$(dirname "$0")/../.."
py=${PYTHON:-python3}
[ -x .venv/bin/python ] && py=.venv/bin/python
LWCBENCH_BLESS=1 cargo test --profile citest --locked -p lwcbench-data --lib generated_files_follow_boards_toml
"$py" scripts/data/emulated-cycles.py "$@"
