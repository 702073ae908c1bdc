/* The C++ DRACO (cpp/draco) on the LX106 (mcu/lx106_draco.py): -DLWC_REF or -DLWC_FAST picks the
 * variant. Key and IV are the counts' fixed ones (mcu/emulate.py default_key / default_iv). Per
 * entry of the cell list (its second word: keystream bits) one untimed init, then one timed
 * keystream call between the marks; the keystream goes to the host as "ks NBITS RC HEX". */
#include <stdint.h>
#include "draco.h"

#if defined(LWC_REF)
static draco_ref_state st;
#define LWC_INIT draco_ref_init
#define LWC_KS draco_ref_keystream_bits
#else
static draco_fast_state st;
#define LWC_INIT draco_fast_init
#define LWC_KS draco_fast_keystream_bits
#endif

#define MAX_BITS 32768u
#define MAX_CELLS 128u

extern volatile const uint32_t lwc_cells[];
void lwc_mark_begin(void);
void lwc_mark_end(void);
static uint8_t ks[MAX_BITS / 8];
static char line[MAX_BITS / 4 + 64];

static void put(const char *p, int n) {
    register int a2 __asm__("a2") = 4; /* SYS_write */
    register int a3 __asm__("a3") = 1;
    register int a4 __asm__("a4") = (int)(intptr_t)p;
    register int a5 __asm__("a5") = n;
    __asm__ volatile("simcall" : "+r"(a2), "+r"(a3) : "r"(a4), "r"(a5) : "memory");
}

static char *put_u(char *p, uint32_t v) {
    char t[12];
    int n = 0;
    do {
        t[n++] = (char)('0' + v % 10u);
        v /= 10u;
    } while (v);
    while (n) *p++ = t[--n];
    *p++ = ' ';
    return p;
}

int lx106_main(void) {
    static const char hexd[] = "0123456789abcdef";
    uint8_t key[DRACO_KEY_BYTES], iv[DRACO_IV_BYTES];
    for (unsigned i = 0; i < DRACO_KEY_BYTES; i++) key[i] = (uint8_t)(0x11u * i);
    for (unsigned i = 0; i < DRACO_IV_BYTES; i++) iv[i] = (uint8_t)(0xF0u - 0x0Fu * i);
    uint32_t n = lwc_cells[0];
    if (n > MAX_CELLS) return 3;
    for (uint32_t c = 0; c < n; c++) {
        uint32_t bits = lwc_cells[2 + 2 * c];
        if (bits > MAX_BITS) return 4;
        if (LWC_INIT(&st, key, iv)) return 5;
        lwc_mark_begin();
        int rc = LWC_KS(&st, ks, bits);
        lwc_mark_end();
        char *p = line;
        *p++ = 'k';
        *p++ = 's';
        *p++ = ' ';
        p = put_u(p, bits);
        p = put_u(p, (uint32_t)rc);
        for (uint32_t k = 0; k < (bits + 7u) / 8u; k++) {
            *p++ = hexd[ks[k] >> 4];
            *p++ = hexd[ks[k] & 15];
        }
        *p++ = '\n';
        put(line, (int)(p - line));
    }
    return 0;
}
