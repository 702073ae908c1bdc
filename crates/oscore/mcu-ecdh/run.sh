#!/usr/bin/env bash
# The device cost of one ECDH, EDHOC's key exchange operation: P-256 (RustCrypto p256 0.13 as
# lakers uses it; cipher suite 2) and X25519 (x25519-dalek 2; cipher suite 0), emulated with
# mcu/emulate.py on a Cortex-M4 board (Arduino Nano 33 BLE, nRF52840 @64 MHz), a Cortex-M0+
# board (Arduino MKR Zero, SAMD21 @48 MHz; Raspberry Pi Pico, RP2040 @125 MHz) and an RV32IMC
# board (ESP32-C3 @160 MHz). Fails unless the emulated shared secret is the expected one below,
# so a count of a wrong computation is never reported.
#   crates/oscore/mcu-ecdh/run.sh [p256|x25519 ...]   (needs the thumb and riscv32imc targets and .venv with unicorn, capstone)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
py="${MCU_VENV:-$root/.venv}/bin/python"
target_dir="$root/target/mcu-ecdh"
# scalar and expected shared secret per curve:
#  p256: RFC 9529 section 3's SK_I times its G_R; the x-coordinate from Python's `cryptography`:
#        ec.derive_private_key(SK_I, SECP256R1()).exchange(ECDH(), G_R)
#  x25519: RFC 7748 section 6.1, Alice's private key times Bob's public key = K (also what
#        `cryptography`'s X25519PrivateKey.exchange gives)
declare -A KEY=(
  [p256]=fb13adeb6518cee5f88417660841142e830a81fe334380a953406a1305e8706b
  [x25519]=77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a
)
declare -A EXPECTED=(
  [p256]=b73fd1ae741a02fe96460d0b1b46dea6aea21dce9ed6ca8d616a4ceabcca5551
  [x25519]=4a5d9d5ba4ce2de1728e3bf480350f25e07e21c947d19e3376f09b3c1e161742
)
curves=("$@")
[ ${#curves[@]} -gt 0 ] || curves=(p256 x25519)
for curve in "${curves[@]}"; do
  if [ -z "${KEY[$curve]:-}" ]; then
    echo "error: unknown curve '$curve' (p256, x25519)" >&2
    exit 2
  fi
  for spec in thumbv7em-none-eabihf:nano33ble thumbv6m-none-eabi:mkrzero thumbv6m-none-eabi:rp2040 \
      riscv32imc-unknown-none-elf:esp32c3; do
    triple="${spec%%:*}" board="${spec##*:}"
    (cd "$here" && CARGO_TARGET_DIR="$target_dir" nice -n 5 cargo build -q --locked --release --target "$triple" --bin "$curve")
    out="$("$py" "$root/mcu/emulate.py" "$target_dir/$triple/release/$curve" "$triple" 256 --key "${KEY[$curve]}" --board "$board")"
    if ! grep -qx "keystream: ${EXPECTED[$curve]}" <<<"$out"; then
      echo "error: $curve $triple/$board: the emulated ECDH gave another shared secret:" >&2
      echo "$out" >&2
      exit 1
    fi
    echo "$curve $triple $board: $(head -1 <<<"$out")"
  done
done
