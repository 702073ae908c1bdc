#!/usr/bin/env bash
# Host parity: is a library's figure in `lwcbench run` what an application calling the
# library directly pays? For every library the catalogue adapts, a plain loop (C:
# scripts/ci/parity/plain.c; Rust: crates/catalog/examples/plain_loop.rs) makes the adapter's
# call sequence per AEAD `encrypt` and times it as the runner does; `lwcbench run` measures
# the same cipher, scenario, <k,iv> and sizes. The two alternate (A/B, order swapped every
# round) in one session, so drift of a shared machine hits both. Reported per size: medians
# with distribution-free 95 % CIs, the lwcbench/plain ratio of medians with a bootstrap 95 %
# CI, and the spread of the per-round ratios (docs/measurement.md "Host parity").
#
# usage: scripts/ci/host-parity.sh [--quick] [--rounds R] [--samples N] [--out DIR] [--only LIB]
#   --quick     1 round, 16 B and 1 KiB, 5 samples, OpenSSL and RustCrypto ChaCha20-Poly1305
#   --rounds R  A/B rounds (default 6)     --samples N  samples per run and size (default 30)
#   --out DIR   where parity.csv / parity.md go (default lwcbench-results/host-parity-<time>)
#   --only LIB  one library: openssl, gcrypt, wolfssl, rustcrypto, own
# PARITY_LWCBENCH=path measures another lwcbench binary (e.g. an older build) against the loops.
set -euo pipefail
cd "$(dirname "$0")/../.."
ROUNDS=6 SAMPLES=30 OUT="" ONLY="" QUICK=0
SIZES="16 1024 16384 262144"
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) QUICK=1; ROUNDS=1; SAMPLES=5; SIZES="16 1024"; shift ;;
    --rounds) ROUNDS="${2:?--rounds needs a value}"; shift 2 ;;
    --samples) SAMPLES="${2:?--samples needs a value}"; shift 2 ;;
    --out) OUT="${2:?--out needs a value}"; shift 2 ;;
    --only) ONLY="${2:?--only needs a value}"; shift 2 ;;
    -h|--help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "error: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
case "$ROUNDS" in ''|*[!0-9]*|0) echo "error: --rounds must be a positive integer" >&2; exit 2 ;; esac
case "$SAMPLES" in ''|*[!0-9]*|0|1|2|3|4) echo "error: --samples must be an integer >= 5" >&2; exit 2 ;; esac
OUT="${OUT:-lwcbench-results/host-parity-$(date -u +%Y%m%dT%H%M%SZ)}"
mkdir -p "$OUT/raw"
TARGET="${CARGO_TARGET_DIR:-target}"
CFLAGS_PARITY="-O2 -march=native"

cargo build --release --locked -q -p lwcbench -p lwcbench-catalog --bin lwcbench --example plain_loop
LWC="${PARITY_LWCBENCH:-$TARGET/release/lwcbench}"
RPLAIN="$TARGET/release/examples/plain_loop"
CPLAIN="$OUT/plain"
# shellcheck disable=SC2046
gcc $CFLAGS_PARITY -Wall -Wextra -o "$CPLAIN" scripts/ci/parity/plain.c \
  $(pkg-config --cflags --libs libcrypto libgcrypt wolfssl)

# lib | cipher (plain loop) | lwcbench id | plain program
CASES="openssl chacha20-poly1305 ChaCha20-Poly1305/openssl c
openssl aes-128-gcm AES-128-GCM/openssl c
gcrypt aes-128-gcm AES-128-GCM/gcrypt c
wolfssl aes-128-gcm AES-128-GCM/wolfssl c
rustcrypto chacha20-poly1305 ChaCha20-Poly1305/rustcrypto rust
rustcrypto aes-128-gcm AES-128-GCM/rustcrypto rust
own xoodyak Xoodyak/rust-ref rust"
if [ "$QUICK" = 1 ]; then
  CASES=$(printf '%s\n' "$CASES" | grep chacha20-poly1305)
fi
if [ -n "$ONLY" ]; then
  CASES=$(printf '%s\n' "$CASES" | awk -v l="$ONLY" '$1 == l')
  [ -n "$CASES" ] || { echo "error: --only $ONLY: no such library (openssl, gcrypt, wolfssl, rustcrypto, own)" >&2; exit 2; }
fi
LWC_SIZES=$(for s in $SIZES; do printf '%sB,' "$s"; done | sed 's/,$//')

{
  echo "date_utc=$(date -u +%FT%TZ)"
  echo "cpu=$(lscpu | sed -n 's/^Model name: *//p') nproc=$(nproc)"
  echo "governor=$(cat /sys/devices/system/cpu/cpu0/cpufreq/scaling_governor 2>/dev/null || echo 'unknown (no cpufreq)')"
  echo "cc=$(gcc --version | head -1) cflags=$CFLAGS_PARITY"
  echo "rustc=$(rustc --version) rustflags=${RUSTFLAGS:-} profile=release"
  echo "libs=openssl $(pkg-config --modversion libcrypto) gcrypt $(pkg-config --modversion libgcrypt) wolfssl $(pkg-config --modversion wolfssl)"
  echo "commit=$(git rev-parse --short HEAD)$(git diff --quiet || echo -dirty) lwcbench=$LWC"
  echo "rounds=$ROUNDS samples=$SAMPLES sizes=$SIZES"
  echo "load_start=$(cut -d' ' -f1-3 /proc/loadavg)"
} > "$OUT/machine.txt"

plain_run() { # lib cipher prog bytes kiv round
  local bin="$CPLAIN"; [ "$3" = rust ] && bin="$RPLAIN"
  "$bin" "$1" "$2" "$4" "$5" "$SAMPLES" 20 | sed "s/^/$1,$2,$4,$5,$6,plain,/" >> "$OUT/raw/samples.csv"
}
lwc_run() { # lib cipher id round
  local d="$OUT/raw/lwc-$1-$2-$4"
  if ! "$LWC" run --cipher "${3%/*}" --impl "${3#*/}" --scenario encrypt --sizes "$LWC_SIZES" --kiv ss,rr \
    --reps "$SAMPLES" --warmup 3 --seed "$4" --out "$d" --force --quiet >/dev/null 2>"$d.stderr"; then
    echo "error: lwcbench run for $3 failed:" >&2; grep -v warning "$d.stderr" >&2; exit 1
  fi
  python3 scripts/ci/parity/report.py --append "$d/samples.csv" "$1" "$2" "$4" "$OUT/raw/samples.csv"
}

echo "lib,cipher,bytes,kiv,round,tool,ns_per_op" > "$OUT/raw/samples.csv"
for r in $(seq 1 "$ROUNDS"); do
  while read -r lib cipher id prog; do
    if [ $((r % 2)) = 1 ]; then
      for s in $SIZES; do for k in ss rr; do plain_run "$lib" "$cipher" "$prog" "$s" "$k" "$r"; done; done
      lwc_run "$lib" "$cipher" "$id" "$r"
    else
      lwc_run "$lib" "$cipher" "$id" "$r"
      for s in $SIZES; do for k in ss rr; do plain_run "$lib" "$cipher" "$prog" "$s" "$k" "$r"; done; done
    fi
  done <<< "$CASES"
  echo "round $r of $ROUNDS done (load $(cut -d' ' -f1 /proc/loadavg))" >&2
done
echo "load_end=$(cut -d' ' -f1-3 /proc/loadavg)" >> "$OUT/machine.txt"

python3 scripts/ci/parity/report.py "$OUT"
