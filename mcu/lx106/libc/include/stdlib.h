/* Allocation from a fixed arena and abort (mcu/lx106/libc/libc.c). */
#ifndef LX106_STDLIB_H
#define LX106_STDLIB_H
#include <stddef.h>
#ifdef __cplusplus
extern "C" {
#endif
void *malloc(size_t n);
void *calloc(size_t n, size_t m);
void *realloc(void *p, size_t n);
void free(void *p);
/* The harness empties the arena before each timed call (what an implementation allocates lives
 * for one call). */
void lx106_heap_reset(void);
void abort(void) __attribute__((noreturn));
void exit(int status) __attribute__((noreturn));
#ifdef __cplusplus
}
#endif
#endif
