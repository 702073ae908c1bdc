#!/bin/sh
# A test engine for the lwcbench engine protocol (docs/engine-protocol.md) in POSIX sh + awk,
# to show the protocol does not depend on Python. Its cipher is a toy (byte-wise addition of
# the key, NOT encryption) and its times are synthetic; lwcbench's tests drive it.
prog="$(dirname "$0")/engine.awk"
# mawk reads a pipe in blocks unless told to be interactive; other awks read lines.
if awk -W version 2>/dev/null | grep -q mawk; then
  exec awk -W interactive -f "$prog"
fi
exec awk -f "$prog"
