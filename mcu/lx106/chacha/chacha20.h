/* ChaCha20 (RFC 8439, 96-bit nonce, 32-bit block counter) and ChaCha20-Poly1305 in portable C,
 * this project's own code for the ESP8266 images (mcu/lx106_images.py): the Poly1305 share of
 * `lwcbench choose`'s stream + Poly1305 composition on a board without Rust images. */
#ifndef LX106_CHACHA20_H
#define LX106_CHACHA20_H
#include <stddef.h>
#include <stdint.h>

#define CHACHA20_KEY_BYTES 32
#define CHACHA20_NONCE_BYTES 12

typedef struct chacha20_state {
    uint32_t in[16];   /* constants, key, counter, nonce */
    uint8_t buf[64];   /* the current keystream block */
    uint32_t used;     /* bytes of buf already given out (64: none left) */
} chacha20_state;

/* Key and nonce set, block counter `counter`. */
void chacha20_setup(chacha20_state *st, const uint8_t key[32], const uint8_t nonce[12], uint32_t counter);
/* The next n keystream bytes XORed into data (out may equal in). */
void chacha20_xor(chacha20_state *st, uint8_t *out, const uint8_t *in, size_t n);

/* The stream-cipher entry points of mcu/lx106/stream_harness.c: counter 0, keystream bits packed
 * as bytes (whole bytes; a partial last byte keeps its low bits 0). */
int chacha20_init(chacha20_state *st, const uint8_t key[32], const uint8_t nonce[12]);
int chacha20_keystream_bits(chacha20_state *st, uint8_t *out, size_t nbits);
#endif
