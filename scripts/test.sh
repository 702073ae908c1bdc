#!/usr/bin/env bash
# Runs every test. Expects ./scripts/setup.sh --test to have run. The suites, in order
# (tests/scripts/test_test_sh.py checks this list against the `suite` calls below):
#   cargo fmt                  every Rust workspace (scripts/ci/workspaces.sh) is formatted
#   cargo clippy               no warning, the workspace lints included (missing_docs, unwrap_used)
#   no_std clippy              the same for firmware/ (host and board crates) and mcu/images
#                              (on its thumbv6m target)
#   import cycles              no import cycle between the modules of a crate; tests/scripts
#   shared dependencies        the Python package and the test build resolve shared crates alike
#   cargo test                 unit and integration tests of all crates (profile citest: release
#                              optimisation without LTO); the suites after it run the
#                              target/citest/lwcbench this build made
#   instruction parity         an adapter costs at most a bounded number of instructions per AEAD
#                              call over a plain loop (valgrind)
#   aarch64 no_std build       the own no_std cipher crates build for 64-bit ARM
#   verify                     lwcbench verify: every known-answer test, official vectors included
#   verify pycryptodome        the same through the PyCryptodome engine process
#   smoke run                  a small benchmark through the CLI; the result files exist
#   link probe                 scripts/ci/link-probe.py --ci: end-to-end probes of lwcbench link
#                              against mosquitto, PostgreSQL and the Modbus proxies
#   python + browser           the Python package (bindings, loader, figures) and the HTML report
#                              in headless Chromium
#   installed binary + wheel   `cargo install`'s binary and the maturin wheel in a fresh venv, each
#                              run from a temporary directory outside the checkout: list, verify,
#                              run --preset quick, choose, link (scripts/ci/installed.sh)
#   pycryptodome engine        the engine process (engine protocol) and its vectors
#   modbus proxy (pymodbus)    the Modbus/TCP proxies between pymodbus master and slave
#   oscore gateway (aiocoap)   an aiocoap OSCORE client posting readings to `link gateway --protocol oscore`
#   mcu images                 microcontroller cross-builds, emulated counts, timing models,
#                              NIST LWC samples, LX106 (mcu/tests)
#   emulated cycles table      data/emulated-cycles.csv and data/mcu-sizes.csv re-measured (tests/energy)
#   mcu run + report           lwcbench mcu end to end and its report
#   firmware cargo test        board firmware's shared bench code (firmware/)
#   firmware pytest            QEMU end to end (UART -> lwcbench collect -> report), Pico build,
#                              Arduino sketch against the stand-in API
#   ARM Linux cross build      the CLI cross-built for aarch64 and armv7 (x86-64 hosts only)
#   aarch64 Linux (qemu)       verify, a quick run and a link session under qemu-user
#   armv7 Linux (qemu)         the same for 32-bit Raspberry Pi OS
#   checkout unchanged         setup + tests rewrote no tracked file and left no untracked one
set -uo pipefail
cd "$(dirname "$0")/.."
# The CLI every suite runs: built by the "cargo test" suite (profile citest, the workspace's test
# features), so the tests compile the dependencies once. The release binary (thin LTO, one
# codegen unit) is the product's, built by ./scripts/setup.sh without --test.
LWC="$PWD/target/citest/lwcbench"
. scripts/ci/workspaces.sh
# ARM Linux is cross-built and run under qemu-user on an x86-64 host; on a Pi the suites above
# test the native build.
CROSS_ARM=0
[ "$(uname -m)" = x86_64 ] && CROSS_ARM=1

# Every suite runs even when an earlier one failed (one flaky suite must not hide the others'
# results); each outcome is printed, then a summary line, and the script fails if any failed.
PASSED=() FAILED=()
suite() {
  local name=$1
  shift
  local start=$SECONDS
  echo "=== test.sh: $name"
  if "$@"; then
    PASSED+=("$name")
    echo "=== test.sh: $name: passed ($((SECONDS - start)) s)"
  else
    FAILED+=("$name")
    echo "=== test.sh: $name: FAILED ($((SECONDS - start)) s)" >&2
  fi
}

# ARM Linux (docs/raspberry-pi.md): the CLI cross-built (profile `cross`: correctness under
# emulation, not timing) with Debian's cross compilers and multiarch OpenSSL (pkg-config reads the
# target's .pc files only; gcrypt and wolfssl have no multiarch -dev packages and stay out), then
# under qemu-user: verify (0 failed), the quick preset (run.json names the ARM clock and its rate
# holds), the refused instruction counter and a link session on the embedded broker.
# One cargo invocation builds both targets, so host-side work (proc macros, build scripts) is
# done once; pkg-config reads each target's own .pc files through its target-suffixed variable.
# It starts now, in the background at the lowest CPU priority: it takes the CPU the suites below
# leave idle (waiting on brokers, databases, QEMU, the browser), and its suite waits for it.
ARM_TARGETS=(aarch64-unknown-linux-gnu armv7-unknown-linux-gnueabihf)
arm_build() {
  PKG_CONFIG_ALLOW_CROSS=1 \
    PKG_CONFIG_LIBDIR_aarch64_unknown_linux_gnu="/usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig" \
    PKG_CONFIG_LIBDIR_armv7_unknown_linux_gnueabihf="/usr/lib/arm-linux-gnueabihf/pkgconfig:/usr/share/pkgconfig" \
    nice -n 19 cargo build --locked --profile cross "${ARM_TARGETS[@]/#/--target=}" -p lwcbench
}
arm_pid=""
if ((CROSS_ARM)); then
  mkdir -p target
  arm_build >target/arm-build.log 2>&1 &
  arm_pid=$!
  # An interrupted test.sh does not leave the build running.
  trap '[ -n "$arm_pid" ] && pkill -TERM -P "$arm_pid" 2>/dev/null' EXIT
fi
# Link sessions without --key-file keep their master key in LWCBENCH_KEY_DIR (docs/link.md): a
# fresh directory for this run, so no test reads or fills ~/.config/lwcbench/link-keys.
LWCBENCH_KEY_DIR=$(mktemp -d "${TMPDIR:-/tmp}/lwcbench-keys.XXXXXX") || exit 1
export LWCBENCH_KEY_DIR
trap '[ -n "$arm_pid" ] && pkill -TERM -P "$arm_pid" 2>/dev/null; rm -rf "$LWCBENCH_KEY_DIR"' EXIT
arm_wait() {
  local rc=0
  wait "$arm_pid" || rc=$?
  arm_pid=""
  if ((rc)); then tail -n 40 target/arm-build.log >&2; else tail -n 1 target/arm-build.log; fi
  return "$rc"
}

fmt_check() {
  # Style gate: one rustfmt.toml for every Rust workspace in the tree.
  for m in "${RUST_WORKSPACES[@]}"; do
    cargo fmt --all --manifest-path "$m" -- --check || return 1
  done
}
suite "cargo fmt" fmt_check
# Under the citest profile, clippy's build scripts and proc macros are the test build's too.
suite "cargo clippy" cargo clippy --workspace --all-targets --profile citest --locked -- -D warnings
# The no_std workspaces (firmware/, mcu/images) have their own [workspace.lints]: each crate on
# the target it is built for, in the target directory its build suite uses below.
nostd_clippy() {
  local lint=(--release --locked)
  (cd firmware && export CARGO_TARGET_DIR="$PWD/../target/fw" &&
    cargo clippy "${lint[@]}" -p lwc-board-bench -p lwc-power-logger --all-targets -- -D warnings &&
    cargo clippy "${lint[@]}" -p lwc-board-qemu --target thumbv7m-none-eabi -- -D warnings &&
    cargo clippy "${lint[@]}" -p lwc-board-pico -p lwc-pico-logger --target thumbv6m-none-eabi -- -D warnings) &&
    (cd mcu/images && CARGO_TARGET_DIR="$PWD/../../target/mcu" \
      cargo clippy "${lint[@]}" --target thumbv6m-none-eabi --bins --lib -- -D warnings)
}
suite "no_std clippy" nostd_clippy
# No import cycle between the modules of any crate; the checker's own tests on hand-made crates
# (tests/scripts also holds shared-deps.py's).
suite "import cycles" bash -c 'python3 scripts/ci/import-cycles.py --check crates/*/ && .venv/bin/python -m pytest -q tests/scripts'
# The Python package, built by setup.sh --test in the test build's target directory, has the test
# build's dependency versions and features, so "cargo test" compiles none of them again.
suite "shared dependencies" python3 scripts/ci/shared-deps.py --check
suite "cargo test" cargo test --workspace --profile citest --locked --no-fail-fast
# Instructions per message through lwcbench equal a plain loop calling the library directly
# (callgrind; the C libraries through scripts/ci/parity/plain.c, which the suite compiles), the Rust
# loop from the test build above: one profile and the workspace's features for both
# (built for its crate alone, the RustCrypto ChaCha20-Poly1305 loop took ~827 fewer instructions
# per message than through lwcbench).
suite "instruction parity" python3 scripts/ci/parity/instructions.py --check --lwcbench "$LWC" \
  --plain target/citest/examples/plain_loop
# The own no_std cipher crates also build for 64-bit ARM (a Pi 4/5 class host): the x86-64
# SIMD paths must stay behind their cfg gates.
suite "aarch64 no_std build" env CARGO_TARGET_DIR="$PWD/target/aarch64" cargo check --release --locked \
  --target aarch64-unknown-none -p lwcbench-core -p lwcbench-draco -p lwcbench-estream -p lwcbench-lightweight
suite "verify" "$LWC" verify
suite "verify pycryptodome" "$LWC" verify --engine pycryptodome
smoke_run() {
  "$LWC" run --preset quick --out target/smoke-run --force --quiet || return 1
  for f in samples.csv summary.csv run.json report.html; do
    test -s "target/smoke-run/$f" || { echo "test.sh: smoke run did not write $f" >&2; return 1; }
  done
}
suite "smoke run" smoke_run
# The link probed end to end as an attacker and a careless operator would (mosquitto, a foreign
# MQTT client, PostgreSQL): nonce reuse, a gateway stopped by one message, silent failures.
# (the venv's Python: the key-hierarchy probes seal frames with its cryptography package)
suite "link probe" .venv/bin/python scripts/ci/link-probe.py --ci --bin "$LWC"
suite "python + browser" env LWCBENCH_BIN="$LWC" .venv/bin/python -m pytest -q python/tests \
  tests/browser
# lwcbench as a user installs it, outside the checkout; both builds reuse the test build's
# target directory and profile (the wheel's dependencies were compiled by setup.sh --test).
suite "installed binary + wheel" scripts/ci/installed.sh
suite "pycryptodome engine" .venv/bin/python -m pytest -q engines/pycryptodome
# A foreign Modbus/TCP master and slave (pymodbus) through the encrypting proxy pair.
suite "modbus proxy (pymodbus)" env LWCBENCH_BIN="$LWC" .venv/bin/python -m pytest -q tests/modbus
# A foreign OSCORE client (aiocoap) posting readings to `link gateway --protocol oscore`.
suite "oscore gateway (aiocoap)" env LWCBENCH_BIN="$LWC" .venv/bin/python -m pytest -q tests/oscore
# Cross-built images: emulated keystream equals the host's, pinned instruction counts, tables.
suite "mcu images" env CARGO_TARGET_DIR="$PWD/target/mcu" .venv/bin/python -m pytest -q mcu/tests
# data/emulated-cycles.csv (--board energy) equals what the emulator gives for a sample of images.
suite "emulated cycles table" env CARGO_TARGET_DIR="$PWD/target/mcu" .venv/bin/python -m pytest -q tests/energy
mcu_run() {
  "$LWC" mcu --preset counts --profiles Os --no-build --force --out target/mcu-run &&
    test -s target/mcu-run/mcu_sizes.csv && test -s target/mcu-run/mcu_counts.csv && test -s target/mcu-run/run.json &&
    "$LWC" report target/mcu-run && test -s target/mcu-run/report.html
}
suite "mcu run + report" mcu_run
suite "firmware cargo test" bash -c 'cd firmware && CARGO_TARGET_DIR="$PWD/../target/fw" cargo test --release --locked -p lwc-board-bench -p lwc-power-logger'
suite "firmware pytest" env CARGO_TARGET_DIR="$PWD/target" LWCBENCH_BIN="$LWC" .venv/bin/python \
  -m pytest -q firmware/tests
arm_suite() {
  local target=$1 qemu=$2 counter=$3
  local bin="target/$target/cross/lwcbench" out="target/arm-$target"
  [ -x "$bin" ] || { echo "test.sh: $bin was not built (see the ARM cross build suite)" >&2; return 1; }
  rm -rf "$out" && mkdir -p "$out" || return 1
  "$qemu" "$bin" verify >"$out/verify.txt" 2>&1 || { tail -n 20 "$out/verify.txt" >&2; return 1; }
  grep '^verify:' "$out/verify.txt"
  "$qemu" "$bin" run --preset quick --out "$out/quick" --force --quiet || return 1
  python3 - "$out/quick/run.json" "$counter" <<'PY' || return 1
import json, sys
c = json.load(open(sys.argv[1]))["clock"]
print(f"run.json clock: {c['counter']} at {c['counter_hz']} Hz ({c['counter_hz_source']}), measured {c['cycles_per_ns']} GHz")
if c["counter"] != sys.argv[2] or (c["counter_hz"] is None) != (sys.argv[2] == "none"):
    sys.exit(f"test.sh: run.json clock.counter is {c['counter']!r}, expected {sys.argv[2]!r}")
# The counter's rate over a sleep timed by CLOCK_MONOTONIC agrees with CNTFRQ_EL0 within 10 %.
if c["counter_hz"] and abs(c["cycles_per_ns"] * 1e9 / c["counter_hz"] - 1) > 0.10:
    sys.exit("test.sh: the counter's measured rate disagrees with clock.counter_hz")
PY
  local err
  if err=$("$qemu" "$bin" run --preset quick --counter instructions --out "$out/counted" 2>&1); then
    echo "test.sh: --counter instructions was accepted on $target" >&2
    return 1
  fi
  [ "$(grep -c . <<<"$err")" -eq 1 ] && grep -q '^error: --counter instructions' <<<"$err" ||
    { echo "test.sh: --counter instructions on $target: expected one error line, got: $err" >&2; return 1; }
  "$qemu" "$bin" link --devices 4 --messages 25 --out "$out/link" --force || return 1
  python3 - "$out/link/link_summary.csv" <<'PY' || return 1
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
bad = [r["cipher"] for r in rows if r["sent"] != "100" or r["stored"] != "100" or r["missing"] != "0"]
sys.exit(f"test.sh: link session lost or added readings: {bad}" if bad or not rows else 0)
PY
}
if ((CROSS_ARM)); then
  suite "ARM Linux cross build" arm_wait
  suite "aarch64 Linux (qemu)" arm_suite aarch64-unknown-linux-gnu qemu-aarch64-static cntvct_el0
  suite "armv7 Linux (qemu)" arm_suite armv7-unknown-linux-gnueabihf qemu-arm-static none
else
  echo "=== test.sh: ARM Linux (qemu): not run on $(uname -m) (the suites above test this machine's own build)"
fi
# Reproducible build: nothing tracked changed and nothing untracked appeared (outside .gitignore).
clean_checkout() {
  git rev-parse --is-inside-work-tree >/dev/null 2>&1 || return 0
  local dirty
  dirty=$(git status --porcelain)
  [ -z "$dirty" ] && return 0
  echo "test.sh: the checkout changed during setup/tests (commit lock files; ignore outputs):" >&2
  echo "$dirty" >&2
  return 1
}
suite "checkout unchanged" clean_checkout

echo "=== test.sh: suites passed: ${PASSED[*]:-none}"
echo "=== test.sh: suites failed: ${FAILED[*]:-none}"
echo "${#PASSED[@]} passed, ${#FAILED[@]} failed in $SECONDS s"
[ "${#FAILED[@]}" -eq 0 ]
