#!/usr/bin/env bash
# The device cost of one X25519 ECDH (the own EDHOC's cipher suite 0 key exchange, x25519-dalek 2),
# emulated with mcu/emulate.py on a Cortex-M4 board (Arduino Nano 33 BLE,
# nRF52840 @64 MHz) and a Cortex-M0+ board (Arduino MKR Zero, SAMD21 @48 MHz; Raspberry Pi
# Pico, RP2040 @125 MHz). Fails unless the emulated shared secret is the one Python's
# `cryptography` computes for the same keys (EXPECTED below), so a count of a wrong
# computation is never reported.
#   crates/oscore/mcu-x25519/run.sh        (needs the thumb targets and .venv with unicorn, capstone)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
py="${MCU_VENV:-$root/.venv}/bin/python"
target_dir="$root/target/mcu-x25519"
# RFC 7748 section 6.1: Alice's private key times Bob's public key gives K (the RFC's value,
# and Python's `cryptography`: X25519PrivateKey.from_private_bytes(a).exchange(B)).
KEY=77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a
EXPECTED=4a5d9d5ba4ce2de1728e3bf480350f25e07e21c947d19e3376f09b3c1e161742
for spec in thumbv7em-none-eabihf:nano33ble thumbv6m-none-eabi:mkrzero thumbv6m-none-eabi:rp2040; do
  triple="${spec%%:*}" board="${spec##*:}"
  (cd "$here" && CARGO_TARGET_DIR="$target_dir" nice -n 5 cargo build -q --locked --release --target "$triple")
  out="$("$py" "$root/mcu/emulate.py" "$target_dir/$triple/release/oscore-mcu-x25519" "$triple" 256 --key "$KEY" --board "$board")"
  if ! grep -qx "keystream: $EXPECTED" <<<"$out"; then
    echo "error: $triple/$board: the emulated X25519 gave another shared secret:" >&2
    echo "$out" >&2
    exit 1
  fi
  echo "$triple $board: $(head -1 <<<"$out")"
done
