/* The few string.h functions the NIST LWC implementations call (mcu/lx106/libc/libc.c): Debian
 * ships no C library for xtensa-lx106-elf. */
#ifndef LX106_STRING_H
#define LX106_STRING_H
#include <stddef.h>
#ifdef __cplusplus
extern "C" {
#endif
void *memcpy(void *__restrict d, const void *__restrict s, size_t n);
void *memmove(void *d, const void *s, size_t n);
void *memset(void *d, int c, size_t n);
int memcmp(const void *a, const void *b, size_t n);
size_t strlen(const char *s);
int strcmp(const char *a, const char *b);
#ifdef __cplusplus
}
#endif
#endif
