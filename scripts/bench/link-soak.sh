#!/usr/bin/env bash
# Soak run of the link (overload): devices → mosquitto → gateway process → SQLite
# with no faults for a bounded time, sampling the gateway's and the broker's memory (VmRSS),
# the rows stored and the error counters once a second (`lwcbench link chaos --no-faults`
# writes them to chaos_timeline.csv), then asserting:
#   * every reading sent was stored exactly once, nothing forged stored (the chaos verdict);
#   * memory flat: the largest gateway RSS in the last quarter of the run ≤ 1.2 × the largest
#     in the first quarter + 8 MiB (same rule for the broker);
#   * no growth in errors: device PUBACK timeouts and reconnects in the last quarter equal
#     those at the end of the first quarter (zero in a healthy run), and the gateway's refusals
#     grow only by the forged frames the run injects (one per --forge-every, not by re-sends).
# Usage: scripts/bench/link-soak.sh [--ci] [--duration 10m] [--devices 4] [--interval 2ms] [--out DIR] [--bin LWCBENCH]
#   default 10 minutes; --ci: 40 s.
set -euo pipefail
duration=10m devices=4 interval=2ms out="" bin=target/release/lwcbench
while [ $# -gt 0 ]; do
  case "$1" in
    --ci) duration=40s ;;
    --duration) duration=$2; shift ;;
    --devices) devices=$2; shift ;;
    --interval) interval=$2; shift ;;
    --out) out=$2; shift ;;
    --bin) bin=$2; shift ;;
    *) echo "error: link-soak.sh: unknown option '$1' (--ci, --duration, --devices, --interval, --out, --bin)" >&2; exit 2 ;;
  esac
  shift
done
[ -x "$bin" ] || { echo "error: link-soak.sh: --bin: $bin is not an executable (cargo build --release -p lwcbench)" >&2; exit 2; }
if [ -z "$out" ]; then out=$(mktemp -d)/soak; fi
echo "soak: $duration, $devices devices every $interval, out $out; $(uptime)" >&2
"$bin" link chaos --no-faults --duration "$duration" --devices "$devices" --interval "$interval" \
  --forge-every 1s --out "$out"
python3 - "$out" <<'PY'
import csv, json, sys
out = sys.argv[1]
t = list(csv.DictReader(open(f"{out}/chaos_timeline.csv")))
v = json.load(open(f"{out}/run.json"))["config"]["verdict"]
if len(t) < 8:
    sys.exit(f"error: link-soak.sh: only {len(t)} timeline samples")
q = len(t) // 4
first, last = t[:q], t[-q:]
fail = []
for k in ("gateway_rss_kb", "broker_rss_kb"):
    a = max(int(r[k]) for r in first)
    b = max(int(r[k]) for r in last)
    ok = b <= a * 1.2 + 8192
    print(f"{k}: first-quarter max {a/1024:.1f} MiB, last-quarter max {b/1024:.1f} MiB -> {'flat' if ok else 'GROWING'}")
    if not ok:
        fail.append(f"{k} grew from {a} to {b} KiB")
for k in ("device_ack_timeouts", "device_reconnects"):
    a, b = int(first[-1][k]), int(last[-1][k])
    print(f"{k}: {a} after the first quarter, {b} at the end")
    if b > a:
        fail.append(f"{k} grew from {a} to {b}")
span = float(last[-1]["t_s"]) - float(first[-1]["t_s"])
ref = int(last[-1]["gateway_refused"]) - int(first[-1]["gateway_refused"])
print(f"gateway refusals in the last {span:.0f} s: {ref} (forged frames injected: 1 per second)")
if ref > span + 5:
    fail.append(f"{ref} refusals in {span:.0f} s: more than the forged frames")
rows = [int(r["stored_rows"]) for r in t]
print(f"stored {v['stored_rows']} of {v['captured']} readings, lost {v['lost']}, stored twice {v['duplicates_stored']}, "
      f"forged stored {v['forged_stored']}, integrity {v['integrity_check']}; rate {rows[-1]/float(t[-1]['t_s']):.0f}/s")
if fail:
    sys.exit("error: link-soak.sh: " + "; ".join(fail))
print("soak: memory flat, no error growth, nothing lost")
PY
