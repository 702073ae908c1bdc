/* Trivium (De Cannière & Preneel, eSTREAM portfolio), bit-serial, own code for the Arduino
 * sketch. Key/IV bytes map to bits as in the eSTREAM test vectors (K1 = most significant bit
 * of key byte 9, …, K80 = least significant bit of byte 0); keystream bits are packed least
 * significant bit first. firmware/tests/test_arduino.py checks it against an eSTREAM vector
 * and against the Rust implementation in crates/estream.
 * Freestanding: only <stdint.h>/<stddef.h>, so it also compiles for the ESP8266 toolchain. */
#ifndef LWCBENCH_TRIVIUM_H
#define LWCBENCH_TRIVIUM_H
#include <stddef.h>
#include <stdint.h>

#define TRIVIUM_KEY_BYTES 10
#define TRIVIUM_IV_BYTES 10

/* s1..s288 as a ring: s_i is bit[(off + i - 1) mod 288]; one clock moves `off` back by one
 * and writes the three new bits, so a clock costs O(1) instead of shifting 288 bits. */
typedef struct trivium_state {
    uint8_t bit[288];
    uint16_t off;
    uint8_t ready;
} trivium_state;

int trivium_init(trivium_state *st, const uint8_t key[TRIVIUM_KEY_BYTES], const uint8_t iv[TRIVIUM_IV_BYTES]);
/* The next nbits keystream bits into out[0 .. ceil(nbits/8)); unused bits of a last partial
 * byte are zero. Returns 0, or -1 before init. */
int trivium_keystream_bits(trivium_state *st, uint8_t *out, size_t nbits);
/* XOR the next nbits keystream bits into data; bits past nbits stay untouched. */
int trivium_apply_bits(trivium_state *st, uint8_t *data, size_t nbits);

#endif
