#!/usr/bin/env bash
# Link benchmark: for each cipher, the end-to-end path with the embedded broker and
# SQLite at saturation (`--rate max`), then at half the rate it reached, REPEAT times each.
# Prints, per cipher, the medians over the repetitions of: readings/s stored end to end,
# gateway messages/s per core (1e6 / gateway CPU µs per message), and the end-to-end latency
# percentiles at half rate; writes the same as CSV. Compare ciphers within one run of this
# script (the machine is shared: see docs/measurement.md), and quote the machine line with it.
# Usage: scripts/bench/link-bench.sh [OUT.csv] [CIPHERS] [REPEAT] [DEVICES] [MESSAGES]
#   defaults: target/link-bench.csv, Ascon-AEAD128,AES-128-CCM/rustcrypto,
#             ChaCha20-Poly1305/rustcrypto,DRACO/rust-fast,TinyJAMBU-128, 3, 100, 1000
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:-target/link-bench.csv}
ciphers=${2:-Ascon-AEAD128,AES-128-CCM/rustcrypto,ChaCha20-Poly1305/rustcrypto,DRACO/rust-fast,TinyJAMBU-128}
repeat=${3:-3}
devices=${4:-100}
messages=${5:-1000}
bin=${LWCBENCH:-target/release/lwcbench}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$(dirname "$out")"
field() { # field FILE COLUMN: that column of the first data row of a link_summary.csv
  python3 -c 'import csv,sys; print(next(csv.DictReader(open(sys.argv[1])))[sys.argv[2]])' "$1" "$2"
}
echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $(nproc) logical cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "cipher,run,max_msgs_per_s,gateway_msgs_per_s_per_core,half_rate,half_msgs_per_s,e2e_p50_us,e2e_p90_us,e2e_p99_us,e2e_max_us,stored,sent,load1" >"$tmp/raw.csv"
IFS=, read -ra list <<<"$ciphers"
for c in "${list[@]}"; do
  for r in $(seq 1 "$repeat"); do
    d="$tmp/max-$r"
    "$bin" link --cipher "$c" --allow-provisional --devices "$devices" --messages "$messages" --rate max --out "$d" --force >/dev/null
    max=$(field "$d/link_summary.csv" msgs_per_s)
    cpu=$(field "$d/link_summary.csv" gateway_cpu_us_per_msg)
    half=$(python3 -c "print(max(1, int(float('$max') / 2)))")
    h="$tmp/half-$r"
    "$bin" link --cipher "$c" --allow-provisional --devices "$devices" --messages "$messages" --rate "$half" --out "$h" --force >/dev/null
    python3 - "$h/link_summary.csv" "$c" "$r" "$max" "$cpu" "$half" >>"$tmp/raw.csv" <<'PY'
import csv, sys
f, c, r, mx, cpu, half = sys.argv[1:]
s = next(csv.DictReader(open(f)))
load = open("/proc/loadavg").read().split()[0]
per_core = 1e6 / float(cpu) if float(cpu) > 0 else float("nan")
print(",".join([c, r, mx, f"{per_core:.0f}", half, s["msgs_per_s"], s["e2e_p50_us"], s["e2e_p90_us"],
                s["e2e_p99_us"], s["e2e_max_us"], s["stored"], s["sent"], load]))
PY
  done
done
cp "$tmp/raw.csv" "$out"
python3 - "$out" <<'PY'
import csv, statistics as st, sys
rows = list(csv.DictReader(open(sys.argv[1])))
med = lambda c, k: st.median(float(r[k]) for r in rows if r["cipher"] == c)
print(f"{'cipher':32} {'stored/s max':>13} {'gw msgs/s/core':>15} {'half rate':>10} {'p50 µs':>9} {'p99 µs':>9} {'lost':>5}")
for c in dict.fromkeys(r["cipher"] for r in rows):
    lost = sum(int(r["sent"]) - int(r["stored"]) for r in rows if r["cipher"] == c)
    print(f"{c:32} {med(c,'max_msgs_per_s'):13.0f} {med(c,'gateway_msgs_per_s_per_core'):15.0f} "
          f"{med(c,'half_rate'):10.0f} {med(c,'e2e_p50_us'):9.0f} {med(c,'e2e_p99_us'):9.0f} {lost:5d}")
print(f"(medians of {len(rows) // max(1, len(set(r['cipher'] for r in rows)))} repetitions; raw rows in {sys.argv[1]})")
PY
