/* Allocation from a fixed arena and abort (mcu/lx106/libc/libc.c). */
#ifndef LX106_STDLIB_H
#define LX106_STDLIB_H
#include <stddef.h>
#ifdef __cplusplus
extern "C" {
#endif
void *malloc(size_t n);
void *calloc(size_t n, size_t m);
void free(void *p);
void abort(void) __attribute__((noreturn));
void exit(int status) __attribute__((noreturn));
#ifdef __cplusplus
}
#endif
#endif
