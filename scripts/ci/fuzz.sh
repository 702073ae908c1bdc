#!/usr/bin/env bash
# Fuzz lwcbench's parsers of untrusted input for longer than CI does.
#   ./scripts/ci/fuzz.sh              # 300 s per target, fresh seed (printed)
#   ./scripts/ci/fuzz.sh 3600 y4m     # one hour, only the y4m target
#   LWCBENCH_FUZZ_SEED=123 ./scripts/ci/fuzz.sh 60   # replay a seed
# Targets: board_log power_log dataset y4m engine_lines run_dir link_frame. Failing inputs are saved under
# target/fuzz-failures/<target>/; once fixed, copy them into tests/fuzz-corpus/<target>/.
set -euo pipefail
cd "$(dirname "$0")/../.."
secs="${1:-300}"
filter="${2:-fuzz_}"
case "$filter" in fuzz_*) ;; *) filter="fuzz_$filter" ;; esac
LWCBENCH_FUZZ_SECS="$secs" cargo test --release -p lwcbench-fuzz --test fuzz -- --nocapture --test-threads=2 "$filter"
