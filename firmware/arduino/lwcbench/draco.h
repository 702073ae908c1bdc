/* DRACO stream cipher, provisional reconstruction (see shared/specs/draco.md).
 *
 * NOT interoperable with the published cipher: the selection of the non-volatile bit (P1),
 * the initialization (P2) and the bit order (P3) are this project's own choices. They live
 * in one place, `namespace provisional` in draco.cpp.
 *
 * Two variants with the same C API:
 *   draco_ref_*  bit-serial, one array element per state bit, reads like the spec;
 *   draco_fast_* registers in 64-bit words, the autonomous S register run ahead, 64 keystream
 *                bits per output-function evaluation.
 *
 * Embedded-friendly: no heap, no exceptions, no RTTI, no STL; fixed-width integer types only
 * (builds for 32-bit MCUs such as ESP32). All state lives in the caller's struct.
 * Keystream bits are packed most significant bit first (P3); a partial last byte has its
 * unused low bits set to zero (keystream) or left untouched (apply).
 */
#ifndef LWCBENCH_DRACO_H
#define LWCBENCH_DRACO_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define DRACO_KEY_BYTES 16
#define DRACO_IV_BYTES 12

/* Return codes. */
#define DRACO_OK 0
#define DRACO_ERR_NOT_INITIALIZED (-1)
#define DRACO_ERR_NULL (-2)

/* Reference state: one byte (0/1) per bit, named as in the spec. */
typedef struct draco_ref_state {
    uint8_t b[95];  /* B register b0..b94 */
    uint8_t s[33];  /* S register s0..s32 */
    uint8_t n[128]; /* non-volatile state (P1 layout) */
    uint8_t ready;  /* 1 after init */
} draco_ref_state;

/* Fast state. B is kept as a 95-bit register in two words; S runs 128 clocks ahead of B and
 * its output stream for the current and next 64 clocks is buffered in s_a / s_b. */
typedef struct draco_fast_state {
    uint64_t b_lo;   /* b0..b63 */
    uint64_t b_hi;   /* b64..b94 in bits 0..30 */
    uint64_t s_gen;  /* S register (33 bits); ahead of B by 128 clocks once pipelined */
    uint64_t s_a;    /* s0 of clocks T..T+63 (bit t = clock T+t) */
    uint64_t s_b;    /* s0 of clocks T+64..T+127 */
    uint64_t n_lo;   /* n0..n63 */
    uint64_t n_hi;   /* n64..n127 */
    uint64_t z_buf;  /* generated, not yet returned keystream bits; next one at bit 0 */
    uint32_t z_avail;/* number of valid bits in z_buf (0..63) */
    uint32_t flags;  /* bit 0: initialized; bit 1: S pipelined */
    /* First multiplexer level of the P1 selection, derived from N: pair i of N selected by
     * j's bit 0 is sel_a[i] ^ (sel_d[i] & J0) (masks, so the selection is constant-time). */
    uint64_t sel_a[64];
    uint64_t sel_d[64];
} draco_fast_state;

/* sizeof of the two state structs, so foreign mirrors can check their layout. */
size_t draco_ref_state_size(void);
size_t draco_fast_state_size(void);

/* Load key (16 bytes) and IV (12 bytes) and run the (provisional) initialization. */
int draco_ref_init(draco_ref_state *st, const uint8_t key[DRACO_KEY_BYTES], const uint8_t iv[DRACO_IV_BYTES]);
/* Write the next nbits keystream bits to out[0 .. ceil(nbits/8)). */
int draco_ref_keystream_bits(draco_ref_state *st, uint8_t *out, size_t nbits);
/* XOR the next nbits keystream bits into data; bits past nbits stay untouched. */
int draco_ref_apply_bits(draco_ref_state *st, uint8_t *data, size_t nbits);
/* Overwrite the whole state (including the key-derived non-volatile part) with zeros. */
void draco_ref_wipe(draco_ref_state *st);

int draco_fast_init(draco_fast_state *st, const uint8_t key[DRACO_KEY_BYTES], const uint8_t iv[DRACO_IV_BYTES]);
int draco_fast_keystream_bits(draco_fast_state *st, uint8_t *out, size_t nbits);
int draco_fast_apply_bits(draco_fast_state *st, uint8_t *data, size_t nbits);
void draco_fast_wipe(draco_fast_state *st);

#ifdef __cplusplus
}
#endif

#endif /* LWCBENCH_DRACO_H */
