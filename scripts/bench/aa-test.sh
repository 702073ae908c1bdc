#!/usr/bin/env bash
# A/A and planted-slowdown experiment: runs the real tool RUNS times (default 20)
# with every group measured twice in one run (hidden option --twin 0: the same
# implementation again), and RUNS times with the twin doing 10 % more work (--twin 10: every
# 10th operation runs twice). Reads the verdicts of twin.csv (the rule of comparison.csv:
# significant AND the bootstrap CI of the ratio wholly outside ±5 %) and prints the
# false-positive rate (A/A pairs with any verdict other than "no difference") and the
# detection rate (planted pairs judged "twin slower").
# Usage: scripts/bench/aa-test.sh [RUNS] [LWCBENCH]
set -euo pipefail
runs=${1:-20}
bin=${2:-target/release/lwcbench}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
plan=(--cipher Trivium --scenario keystream --sizes 1024 --kiv ss,rr --reps 50 --warmup 3 --quiet)
for p in 0 10; do
  for i in $(seq 1 "$runs"); do
    "$bin" run "${plan[@]}" --twin "$p" --out "$tmp/t$p-$i" >/dev/null 2>&1
  done
done
python3 - "$tmp" "$runs" <<'PY'
import csv, glob, sys
d, runs = sys.argv[1], int(sys.argv[2])
def verdicts(p):
    return [r["verdict"] for f in sorted(glob.glob(f"{d}/t{p}-*/twin.csv")) for r in csv.DictReader(open(f))]
aa, sl = verdicts(0), verdicts(10)
fp = sum(v != "no difference beyond ±5 %" for v in aa)
det = sum(v == "twin slower" for v in sl)
print(f"A/A: {len(aa)} pairs in {runs} runs, {fp} judged different: false-positive rate {fp/len(aa)*100:.1f} %")
print(f"planted 10 % slowdown: {len(sl)} pairs in {runs} runs, {det} judged 'twin slower': detection rate {det/len(sl)*100:.1f} %")
PY
