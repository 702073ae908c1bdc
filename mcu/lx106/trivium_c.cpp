// The Arduino sketch's Trivium (firmware/arduino/lwcbench/trivium.cpp) with C linkage, for the
// C harness (mcu/lx106/stream_harness.c): trivium.h declares C++ names. The code is compiled
// unchanged; only its linkage differs.
#include <stddef.h>
#include <stdint.h>
extern "C" {
#include "trivium.cpp"
}
