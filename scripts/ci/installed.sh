#!/usr/bin/env bash
# lwcbench outside the checkout (README "Install"), as a user gets it from `cargo install` and
# from a wheel: each is installed under a fresh temporary directory outside the checkout and run
# from there, with no LWCBENCH_* variable pointing back into the checkout.
#   binary   `cargo install --path crates/cli`: no path of the checkout inside the binary;
#            list, verify (0 failed), run --preset quick (its files), choose, link (embedded
#            broker + SQLite: every reading stored once); mcu refuses in one line naming
#            LWCBENCH_ROOT (it needs a checkout's cross toolchains)
#   wheel    the wheel maturin builds (pip wheel ./python) installed into a fresh venv: no
#            compile-time path into the checkout in the native module; installed_wheel.py runs
#            every Python verb (ciphers, verify, run, load, compare, collect, choose, link, and
#            mcu's InputError naming LWCBENCH_ROOT)
# Both build in the test build's target directory and profile (target/, citest), reusing what
# the "cargo test" suite and setup.sh --test compiled there. Measured on the loaded 2-vCPU dev VM
# (load average ~14) after a change in crates/catalog: cargo install 516 s, the wheel 300 s;
# run again with nothing changed: 343 s and 146 s (539 s in all) - the two builds still rebuild
# some lwcbench crates after each other in the shared target directory.
# Usage: scripts/ci/installed.sh [binary|wheel]...   (both when none is named)
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
TMP=$(mktemp -d "${TMPDIR:-/tmp}/lwcbench-installed.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
mkdir -p "$TMP/work"
export CARGO_TARGET_DIR="$ROOT/target"
# Nothing may point back into the checkout; keys of link sessions stay in the temporary directory.
unset LWCBENCH_ROOT LWCBENCH_VECTORS LWCBENCH_ENGINES LWCBENCH_PYTHON LWCBENCH_VIDEO LWCBENCH_BIN MCU_VENV
export LWCBENCH_KEY_DIR="$TMP/keys"

fail() {
  echo "installed.sh: $*" >&2
  exit 1
}

# A program built here must find its data at run time: the checkout's absolute path inside it
# means a compile-time path (env!("CARGO_MANIFEST_DIR")) that a copy on another machine follows.
no_checkout_path() {
  if grep -q -F "$ROOT/" "$1"; then
    fail "$1 holds the checkout's path $ROOT/: $(grep -a -o -F "$ROOT/" "$1" | head -n 1)... (a compile-time path; find files at run time, crates/catalog/src/paths.rs)"
  fi
}

# The wheel's crates lie outside python/'s workspace, so their panic messages name source files
# by absolute path ($ROOT/crates/NAME/src/...): those are text, not lookups. Any other path into
# the checkout is a compile-time lookup.
no_lookup_path() {
  python3 - "$1" "$ROOT/" <<'PY' || fail "$1 holds a compile-time path into the checkout (find files at run time, crates/catalog/src/paths.rs)"
import re, sys
data = open(sys.argv[1], "rb").read()
root = re.escape(sys.argv[2].encode())
bad = {m.group(0) for m in re.finditer(root + rb"(?!crates/[\w-]+/src/)[^\x00-\x1f]{0,40}", data)}
for b in sorted(bad):
    print(f"installed.sh: {b!r}", file=sys.stderr)
sys.exit(1 if bad else 0)
PY
}

binary() {
  local start=$SECONDS
  cargo install --quiet --locked --profile citest --path crates/cli --root "$TMP/prefix" ||
    fail "cargo install failed"
  echo "installed.sh: cargo install: $((SECONDS - start)) s"
  local bin="$TMP/prefix/bin/lwcbench"
  no_checkout_path "$bin"
  (
    cd "$TMP/work"
    "$bin" list >list.txt || fail "lwcbench list failed"
    grep -q '^[0-9]* implementations' list.txt || fail "lwcbench list: no count line"
    "$bin" verify >verify.txt 2>&1 || { tail -n 20 verify.txt >&2; fail "lwcbench verify failed"; }
    grep '^verify:' verify.txt
    grep -q '^verify: .* 0 failed' verify.txt || fail "lwcbench verify: failures"
    "$bin" run --preset quick --out quick --quiet || fail "lwcbench run --preset quick failed"
    for f in samples.csv summary.csv run.json report.html; do
      test -s "quick/$f" || fail "run --preset quick did not write $f"
    done
    "$bin" choose --board rp2040 --radio LoRa-SF7 --interval 10m --json >choose.json ||
      fail "lwcbench choose failed"
    python3 -c 'import json, sys; d = json.load(open("choose.json")); sys.exit(0 if d["ranking"] else "choose: empty ranking")' ||
      fail "lwcbench choose: no ranking in choose.json"
    "$bin" link --devices 4 --messages 25 --out link --force >link.txt 2>&1 ||
      { tail -n 20 link.txt >&2; fail "lwcbench link failed"; }
    python3 - link/link_summary.csv <<'PY' || fail "lwcbench link: readings lost or added"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
bad = [r["cipher"] for r in rows if r["sent"] != "100" or r["stored"] != "100" or r["missing"] != "0"]
sys.exit(f"link session lost or added readings: {bad}" if bad or not rows else 0)
PY
    # What needs the checkout says what to set, in one line, and writes nothing.
    local err
    if err=$("$bin" mcu --out mcu 2>&1); then fail "lwcbench mcu ran without a checkout"; fi
    [ "$(grep -c . <<<"$err")" -eq 1 ] && grep -q '^error: mcu: mcu/run.py not found .*LWCBENCH_ROOT' <<<"$err" ||
      fail "lwcbench mcu without a checkout: expected one error line naming LWCBENCH_ROOT, got: $err"
    [ ! -e mcu ] || fail "lwcbench mcu without a checkout created mcu/"
  ) || return 1
  echo "installed.sh: binary: list, verify, run --preset quick, choose, link and mcu's refusal outside the checkout"
}

wheel() {
  local start=$SECONDS
  # The package's committed lock file and the test build's profile (as setup.sh --test).
  MATURIN_PEP517_ARGS="--locked --profile citest" \
    .venv/bin/pip wheel --quiet --no-deps --wheel-dir "$TMP/wheels" ./python || fail "the wheel did not build"
  echo "installed.sh: wheel build: $((SECONDS - start)) s"
  local whl
  whl=$(ls "$TMP"/wheels/lwcbench-*.whl) || fail "no lwcbench wheel in $TMP/wheels"
  python3 -m venv "$TMP/venv" || fail "python3 -m venv failed"
  "$TMP/venv/bin/pip" install --quiet "$whl" || fail "pip install $(basename "$whl") failed"
  local so
  so=$(find "$TMP/venv" -name '_native*.so' | head -n 1)
  [ -n "$so" ] || fail "the wheel installed no native module"
  no_lookup_path "$so"
  (cd "$TMP/work" && "$TMP/venv/bin/python" "$ROOT/scripts/ci/installed_wheel.py" "$TMP/work/py" "$ROOT") || return 1
}

whats=("$@")
[ ${#whats[@]} -gt 0 ] || whats=(binary wheel)
for w in "${whats[@]}"; do
  case $w in
    binary | wheel) "$w" ;;
    *) fail "unknown part '$w' (binary or wheel)" ;;
  esac
done
