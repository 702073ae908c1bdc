// The C++ runtime pieces the NIST LWC C++ implementations reference (virtual destructors,
// pure virtuals); Debian ships no libstdc++ for xtensa-lx106-elf.
#include <stddef.h>
#include <stdlib.h>

void *operator new(size_t n) { return malloc(n); }
void operator delete(void *p) noexcept { free(p); }
void operator delete(void *p, size_t) noexcept { free(p); }
extern "C" void __cxa_pure_virtual() { abort(); }
