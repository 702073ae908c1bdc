#!/usr/bin/env bash
# The device cost of one P-256 ECDH (EDHOC's key exchange operation, RustCrypto p256 0.13 as
# lakers uses it), emulated with mcu/emulate.py on a Cortex-M4 board (Arduino Nano 33 BLE,
# nRF52840 @64 MHz) and a Cortex-M0+ board (Arduino MKR Zero, SAMD21 @48 MHz; Raspberry Pi
# Pico, RP2040 @125 MHz). Fails unless the emulated shared secret is the one Python's
# `cryptography` computes for the same keys (EXPECTED below), so a count of a wrong
# computation is never reported.
#   crates/oscore/mcu-p256/run.sh        (needs the thumb targets and .venv with unicorn, capstone)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
py="${MCU_VENV:-$root/.venv}/bin/python"
target_dir="$root/target/mcu-p256"
# RFC 9529 section 3's SK_I times its G_R; the x-coordinate from Python's `cryptography`:
#   ec.derive_private_key(SK_I, SECP256R1()).exchange(ECDH(), G_R)
KEY=fb13adeb6518cee5f88417660841142e830a81fe334380a953406a1305e8706b
EXPECTED=b73fd1ae741a02fe96460d0b1b46dea6aea21dce9ed6ca8d616a4ceabcca5551
for spec in thumbv7em-none-eabihf:nano33ble thumbv6m-none-eabi:mkrzero thumbv6m-none-eabi:rp2040; do
  triple="${spec%%:*}" board="${spec##*:}"
  (cd "$here" && CARGO_TARGET_DIR="$target_dir" nice -n 5 cargo build -q --locked --release --target "$triple")
  out="$("$py" "$root/mcu/emulate.py" "$target_dir/$triple/release/oscore-mcu-p256" "$triple" 256 --key "$KEY" --board "$board")"
  if ! grep -qx "keystream: $EXPECTED" <<<"$out"; then
    echo "error: $triple/$board: the emulated ECDH gave another shared secret:" >&2
    echo "$out" >&2
    exit 1
  fi
  echo "$triple $board: $(head -1 <<<"$out")"
done
