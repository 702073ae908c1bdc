/* A minimal C library for the LX106 images (Debian ships none for xtensa-lx106-elf): the copy
 * and fill loops work a word at a time when both pointers allow it, as a C library's do. */
#include <stdint.h>
#include <stddef.h>
#include <stdarg.h>
#include "include/string.h"
#include "include/stdlib.h"
#include "include/stdio.h"

void *memcpy(void *__restrict d, const void *__restrict s, size_t n) {
    unsigned char *dp = d;
    const unsigned char *sp = s;
    if ((((uintptr_t)dp | (uintptr_t)sp) & 3) == 0) {
        for (; n >= 4; n -= 4, dp += 4, sp += 4) *(uint32_t *)dp = *(const uint32_t *)sp;
    }
    while (n--) *dp++ = *sp++;
    return d;
}

void *memmove(void *d, const void *s, size_t n) {
    unsigned char *dp = d;
    const unsigned char *sp = s;
    if (dp <= sp || dp >= sp + n) return memcpy(d, s, n);
    while (n--) dp[n] = sp[n];
    return d;
}

void *memset(void *d, int c, size_t n) {
    unsigned char *dp = d;
    if (((uintptr_t)dp & 3) == 0) {
        uint32_t w = (unsigned char)c * 0x01010101u;
        for (; n >= 4; n -= 4, dp += 4) *(uint32_t *)dp = w;
    }
    while (n--) *dp++ = (unsigned char)c;
    return d;
}

int memcmp(const void *a, const void *b, size_t n) {
    const unsigned char *x = a, *y = b;
    for (; n; n--, x++, y++)
        if (*x != *y) return *x - *y;
    return 0;
}

size_t strlen(const char *s) {
    size_t n = 0;
    while (s[n]) n++;
    return n;
}

int strcmp(const char *a, const char *b) {
    while (*a && *a == *b) a++, b++;
    return (unsigned char)*a - (unsigned char)*b;
}

/* A bump allocator with a size word before each block (for realloc); free is a no-op and the
 * harness resets the arena before each call. */
static unsigned char arena[32768] __attribute__((aligned(8)));
static size_t arena_used;

void lx106_heap_reset(void) { arena_used = 0; }

void *malloc(size_t n) {
    if (n > sizeof arena) return NULL;
    n = (n + 7u) & ~(size_t)7u;
    if (n + 8u > sizeof arena - arena_used) return NULL;
    unsigned char *p = arena + arena_used;
    *(size_t *)p = n;
    arena_used += n + 8u;
    return p + 8;
}

void *calloc(size_t n, size_t m) {
    if (m && n > SIZE_MAX / m) return NULL;
    void *p = malloc(n * m);
    if (p) memset(p, 0, n * m);
    return p;
}

void *realloc(void *old, size_t n) {
    void *p = malloc(n);
    if (p && old) {
        size_t had = *(size_t *)((unsigned char *)old - 8);
        memcpy(p, old, had < n ? had : n);
    }
    return p;
}

void free(void *p) { (void)p; }

/* Exit status 134 (as a host's SIGABRT) marks a run that aborted. */
void exit(int status) {
    register int a2 __asm__("a2") = 1;
    register int a3 __asm__("a3") = status;
    __asm__ volatile("simcall" : : "r"(a2), "r"(a3) : "memory");
    for (;;) {
    }
}

void abort(void) { exit(134); }

int printf(const char *fmt, ...) { (void)fmt; return 0; }
int fprintf(FILE *f, const char *fmt, ...) { (void)f; (void)fmt; return 0; }
int sprintf(char *s, const char *fmt, ...) { (void)fmt; if (s) *s = 0; return 0; }
int puts(const char *s) { (void)s; return 0; }
int putchar(int c) { return c; }
