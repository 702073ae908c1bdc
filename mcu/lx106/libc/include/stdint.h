/* No C library for xtensa-lx106-elf in Debian: the compiler's own freestanding definitions. */
#ifndef LX106_STDINT_H
#define LX106_STDINT_H
#include <stdint-gcc.h>
#endif
