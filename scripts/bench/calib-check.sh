#!/usr/bin/env bash
# Calibration check: a run that could leave groups at batch 1–4 without the sample-time floor.
# Runs it N times (default 20) and checks, from the result files, that
#  * every measured sample lasted ≥ the minimum sample time (batch × ns_per_op ≥ min_sample_ns), and
#  * every group's batch is ≥ the size calibrated from its own median: ⌈min_sample_ns / median_ns⌉ × 0.8
#    (20 % slack for the median of the run differing from the calibration trials).
# Usage: scripts/bench/calib-check.sh [RUNS] [LWCBENCH]
set -euo pipefail
runs=${1:-20}
bin=${2:-target/release/lwcbench}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bad=0
for i in $(seq 1 "$runs"); do
  "$bin" run --cipher Trivium --scenario keystream --sizes 2048,1024,512 --kiv ss,rr --reps 20 --warmup 2 \
    --quiet --out "$tmp/r$i" >/dev/null
  if ! python3 - "$tmp/r$i" <<'PY'
import csv, json, math, sys
d = sys.argv[1]
min_ns = json.load(open(f"{d}/run.json"))["min_sample_ns"]
ok = True
for r in csv.DictReader(open(f"{d}/samples.csv")):
    if int(r["batch"]) * float(r["ns_per_op"]) < min_ns:
        print(f"short sample: {r['kiv']} {r['size_bits']} batch {r['batch']} ns {r['ns_per_op']}"); ok = False
rows = []
for r in csv.DictReader(open(f"{d}/summary.csv")):
    if r["kiv"] == "all":
        continue
    b, med = int(r["batch"]), float(r["median_ns"])
    need = math.ceil(min_ns / med)
    rows.append(f"{r['kiv']}/{r['size_bits']}: batch {b} (median {med:.1f} ns → {need})")
    if b < 0.8 * need:
        print("under-calibrated:", rows[-1]); ok = False
print("; ".join(rows))
sys.exit(0 if ok else 1)
PY
  then bad=$((bad + 1)); fi
done
echo "calib-check: $((runs - bad)) of $runs runs had every group calibrated and every sample ≥ the minimum sample time"
[ "$bad" -eq 0 ]
