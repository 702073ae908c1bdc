/* The integer helpers Debian's libgcc for xtensa-lx106-elf leaves out (its lib1funcs part is
 * missing; on an ESP8266 these come from the boot ROM). Shift-and-subtract division and a
 * 16-bit-halves multiply: the costs are of this code, not of the ROM's. */
#include <stdint.h>

uint64_t __udivmoddi4(uint64_t n, uint64_t d, uint64_t *rem);

/* Shift-and-subtract over the quotient's bits only: the divisor is first aligned with the
 * dividend's top bit (as libgcc's own loop does on cores without a divider), so x % 5 for a
 * small x takes a few rounds, not 32. */
static uint32_t udivmod32(uint32_t n, uint32_t d, uint32_t *rem) {
    if (d == 0) {
        *rem = n;
        return 0xffffffffu;
    }
    if (d > n) {
        *rem = n;
        return 0;
    }
    int shift = __builtin_clz(d) - __builtin_clz(n);
    uint32_t q = 0;
    d <<= shift;
    for (int i = shift; i >= 0; i--, d >>= 1) {
        q <<= 1;
        if (n >= d) {
            n -= d;
            q |= 1u;
        }
    }
    *rem = n;
    return q;
}

uint32_t __udivsi3(uint32_t n, uint32_t d) {
    uint32_t r;
    return udivmod32(n, d, &r);
}

uint32_t __umodsi3(uint32_t n, uint32_t d) {
    uint32_t r;
    udivmod32(n, d, &r);
    return r;
}

int32_t __divsi3(int32_t n, int32_t d) {
    uint32_t r, q = udivmod32(n < 0 ? 0u - (uint32_t)n : (uint32_t)n, d < 0 ? 0u - (uint32_t)d : (uint32_t)d, &r);
    return (n < 0) != (d < 0) ? (int32_t)(0u - q) : (int32_t)q;
}

uint64_t __umulsidi3(uint32_t a, uint32_t b) {
    uint32_t al = a & 0xffffu, ah = a >> 16, bl = b & 0xffffu, bh = b >> 16;
    uint32_t ll = al * bl, lh = al * bh, hl = ah * bl, hh = ah * bh;
    uint32_t mid = (ll >> 16) + (lh & 0xffffu) + (hl & 0xffffu);
    uint32_t lo = (ll & 0xffffu) | (mid << 16);
    uint32_t hi = hh + (lh >> 16) + (hl >> 16) + (mid >> 16);
    return ((uint64_t)hi << 32) | lo;
}

uint64_t __muldi3(uint64_t a, uint64_t b) {
    uint32_t al = (uint32_t)a, bl = (uint32_t)b;
    uint64_t p = __umulsidi3(al, bl);
    uint32_t hi = (uint32_t)(p >> 32) + al * (uint32_t)(b >> 32) + (uint32_t)(a >> 32) * bl;
    return ((uint64_t)hi << 32) | (uint32_t)p;
}

uint64_t __udivdi3(uint64_t n, uint64_t d) { return __udivmoddi4(n, d, 0); }

uint64_t __umoddi3(uint64_t n, uint64_t d) {
    uint64_t r;
    __udivmoddi4(n, d, &r);
    return r;
}

int64_t __divdi3(int64_t n, int64_t d) {
    uint64_t q = __udivmoddi4(n < 0 ? 0u - (uint64_t)n : (uint64_t)n, d < 0 ? 0u - (uint64_t)d : (uint64_t)d, 0);
    return (n < 0) != (d < 0) ? (int64_t)(0u - q) : (int64_t)q;
}
